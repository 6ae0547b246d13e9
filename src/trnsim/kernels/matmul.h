// The library matmul kernels: result[M, N] = lhsT[K, M]^T @ rhs[K, N] (lhsT is the left
// operand stored transposed, K-major, as in the NKI matmul tutorial, so that its tiles load
// straight onto the partition axis as stationary operands).
//
// - naive:      for each output tile, for each K tile: load both operand tiles, matmul; a single
//               buffer per operand, so every load waits for the previous matmul and every
//               matmul for its loads (no DMA/compute overlap, tiny transfers).
// - optimized:  the tutorial's fully optimised structure: blocks of TILES_M x TILES_N output
//               tiles accumulated over K blocks of TILES_K tiles; the operand block loads are
//               large (one DMA per 128-row K tile of the block), hoisted out of the inner
//               loops and double-buffered (TileRing), so DMA runs ahead of TensorE; partial
//               sums go PSUM -> SBUF (VectorE) once per K tile group; results are packed into
//               wide rows before the store.
// Supported input dtypes: whatever the chip's TensorE takes (bf16, fp16, fp8, fp32).
#pragma once
#include <cstdint>

#include "trnsim/isa/program.h"
#include "trnsim/kernels/kernel_builder.h"

namespace trnsim::kernels {

enum class MatmulVariant : uint8_t { Naive, Optimized };

struct MatmulBlocking {
  int tiles_m = 16;  // TILES_IN_BLOCK_M (128 rows each)
  int tiles_n = 2;   // TILES_IN_BLOCK_N (512 columns each)
  int tiles_k = 8;   // TILES_IN_BLOCK_K (128 contraction rows each)
  int buffers = 2;   // operand-block buffering depth
};

struct MatmulShape {
  int64_t m = 0, k = 0, n = 0;
  DType in = DType::BF16;   // lhsT and rhs
  DType out = DType::BF16;  // result
};

// Writes the kernel into kb (inputs "lhsT" [K, M], "rhs" [K, N]; output "result" [M, N]).
void matmul_naive(KernelBuilder& kb, const Tensor& lhsT, const Tensor& rhs, const Tensor& result);
void matmul_optimized(KernelBuilder& kb, const Tensor& lhsT, const Tensor& rhs,
                      const Tensor& result, MatmulBlocking blocking = {});

// A complete program: declares the tensors and writes the chosen variant. Blocking is shrunk
// to fit shapes smaller than one block. Throws ShapeError when M, K are not multiples of 128
// or N not a multiple of 512 (or of N itself when N < 512).
isa::Program matmul_program(const hw::ChipSpec& chip, const MatmulShape& shape,
                            MatmulVariant variant, MatmulBlocking blocking = {});

}  // namespace trnsim::kernels
