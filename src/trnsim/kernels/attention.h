// Fused flash-style attention forward: out = softmax(scale * Q K^T [+ causal mask]) V per head,
// never materialising the [seq, seq] score matrix in HBM.
//
// Per head, K^T ([head_dim, seq], head_dim on the partitions) and V ([128, seq/128 x head_dim],
// keys on the partitions) are built once in SBUF (K through TensorE transposes). Per query tile
// of 128 rows and key block of 512:
//   TensorE  S = Q K^T for the block (stationary Q^T, moving K^T: contraction over head_dim)
//   VectorE  row max of S, new running max m' = max(m, scale * rowmax);
//   ScalarE  P = exp(scale * S - m') with its row sum (activation with accumulate),
//            alpha = exp(m - m');
//   TensorE  P^T by four 128x128 transposes (ScalarE copies them out of PSUM), then
//            P V accumulated over the block's four key tiles in PSUM;
//   VectorE  l' = l * alpha + rowsum, acc' = acc * alpha + P V.
// At the end out = acc / l. With `causal`, key blocks wholly after the query tile are skipped
// and the diagonal block adds a precomputed 0 / -1e30 mask (GpSimd iota, once per kernel).
#pragma once
#include "trnsim/kernels/kernel_builder.h"
#include "trnsim/kernels/registry.h"

namespace trnsim::kernels {

// q, k, v, out: [heads, seq, head_dim], one dtype; head_dim <= 128. scale <= 0: 1/sqrt(head_dim).
void attention(KernelBuilder& kb, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
               bool causal, float scale = 0.0f);

KernelDef attention_def();

}  // namespace trnsim::kernels
