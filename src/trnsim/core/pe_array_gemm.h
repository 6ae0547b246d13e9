// The TensorE's fp32 arithmetic, defined here rather than left to a BLAS. Every output is
//   c[m][n] = (accumulate ? c[m][n] : 0) + (((w[0][m] x[0][n] + w[1][m] x[1][n]) + ...) + w[K-1][m] x[K-1][n])
// with each product and each sum rounded to fp32, k ascending (the order partial sums flow down
// the PE array's rows), and the tile's sum added to PSUM once. A BLAS picks its summation order
// per shape, per position in the matrix, per thread count and per CPU (OpenBLAS 0.3.21 gives
// different bits for columns 256-511 of a 512-wide product than for the same columns alone);
// the simulator's results may depend on none of these: a node split over cores must give the
// bits one core gives, and a run on another machine the same bits.
#pragma once
#include <cstdint>

namespace trnsim::core {

// w: [K][M] (row stride ldw), x: [K][N] (ldx), c: [M][N] (ldc); all fp32.
void pe_array_gemm(int M, int N, int K, const float* w, int64_t ldw, const float* x, int64_t ldx,
                   float* c, int64_t ldc, bool accumulate);

}  // namespace trnsim::core
