// A MatMul by a 4:16-pruned constant weight (the sparsify pass marks it `sparse_4_16`) on
// TensorE's structured-sparse path. The sparse operand is the stationary one, so this kernel
// is weight-stationary: W[K tile, 128 output columns] is the stationary, A^T[K tile, up to 512
// rows] the moving operand; PSUM holds out^T [columns, rows], which TensorE transposes back
// (128 x 128 blocks) before the epilogue and the store. Each matmul is timed at the chip's
// sparse rate (sparse_speedup x the bf16 rate).
#pragma once
#include "trnsim/compiler/lower_context.h"

namespace trnsim::compiler {

void lower_sparse_matmul(LowerCtx& ctx);

// An epilogue operand broadcast over a matmul's output [batch..., m, N], walked as [rows, N]
// (the sparse and MX kernels flatten the batch into rows); UnsupportedError when it does not flatten.
TilePlan flat_operand_plan(const Node& n, const SView& v, int64_t rows, int64_t cols);

}  // namespace trnsim::compiler
