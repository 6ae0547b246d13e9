// Lowering of MatMul (numpy semantics: batch broadcasting, 1-D operands) with its fused
// epilogue; and of Gather with run-time indices (lower_gather.cpp), an embedding lookup.
//
// TensorE computes out[M, N] = stationary[K, M]^T @ moving[K, N] with K on the partitions,
// so the left operand is needed K-major. Row-major activations (unit stride along K) are
// loaded with wide DMAs and transposed on TensorE (128x128 blocks through PSUM); operands
// already K-major (constant weights after folding) load straight.
// The stationary blocks of one row tile are kept for all column tiles when they fit.
// Operands are rounded to the policy's matmul dtype on the way into SBUF; PSUM accumulates
// in fp32; the epilogue runs on the fp32 result tile before the store.
#pragma once
#include "trnsim/compiler/lower_context.h"

namespace trnsim::compiler {

// Bumped whenever the lowering's timing changes: caches of measured costs (the llm cost
// cache) carry it in their key, as the probes they also run may not touch the changed path.
inline constexpr int kLoweringVersion = 14;  // 14: a pre-norm LayerNorm read only by MatMuls runs as their A prologue (fuse_norm_prologue.h); 13: matmul results resident in SBUF for matmul readers (sbuf_residency.h); 12: conv kernel rows stacked for non-overlapping few-channel convs, a conv bias in one DMA per group, epilogues fused through same-shape Reshapes, BatchNormalization folded into the conv before it; 11: broadcast parameter rows read once (GpSimd copies them across partitions), resident weights at one row tile, one A^T slot without a next row tile, large last-two-axes transposes on TensorE; 10: the weight-stationary group leaves room for the stationary ring; 9: fused QKV projections; 8: weight-stationary streamed weights; 7: linked programs wait per instruction, not per node; 6: streamed blocks fit their rings; 5: operand rings deep enough for every epilogue operand; 4: resident weights, A^T one row ahead, epilogue on the PSUM evacuation, LayerNorm epilogue

void lower_matmul(LowerCtx& ctx);
void lower_gather(LowerCtx& ctx);

}  // namespace trnsim::compiler
