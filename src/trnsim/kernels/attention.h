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
// With an additive mask, the block's mask tile is loaded (a DMA with stride 0 where it is
// broadcast) and VectorE forms scale * S + mask before the row max, so exp takes scale 1.
#pragma once
#include <optional>
#include <vector>

#include "trnsim/kernels/kernel_builder.h"
#include "trnsim/kernels/registry.h"

namespace trnsim::kernels {

// q, k, v, out: [heads, seq, head_dim], one dtype; head_dim <= 128. scale <= 0: 1/sqrt(head_dim).
void attention(KernelBuilder& kb, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
               bool causal, float scale = 0.0f);

// A logical [heads, rows, cols] operand laid over an HBM tensor by element strides, so that
// the compiler can hand the kernel a transposed or broadcast tensor without a copy: element
// (h, r, c) is at offset + sum(unravel(h, head_shape) * head_strides) + r * row_stride +
// c * col_stride. Strides may be 0 (a mask broadcast over heads or query rows).
struct AttentionOperand {
  Tensor tensor;
  int64_t offset = 0;
  std::vector<int64_t> head_shape, head_strides;  // empty: one head
  int64_t row_stride = 0, col_stride = 1;
  int64_t head_offset(int64_t h) const;
  // Rows `rows` x cols [c0, c1) of head h as a DMA view (rows on the partitions).
  View rows(int64_t h, Range rows, Range cols) const;
  // A contiguous [heads, rows, cols] tensor.
  static AttentionOperand dense(const Tensor& t);
};

// The general form: q/out [heads, seq_q, head_dim], k/v [heads, seq_k, head_dim], optional
// additive mask [heads, seq_q, seq_k] added to the scaled scores (ONNX order: softmax(scale *
// Q K^T + mask) V; masked-out entries are large negatives such as -3.4e38). `dtype` is the
// on-chip dtype of Q, K, V and P (the HBM tensors may be fp32: the DMA converts). Only heads
// [head_begin, head_end) are computed, on the builder's current core: the compiler splits the
// heads across NeuronCores by calling this once per core.
struct AttentionSpec {
  AttentionOperand q, k, v, out;
  std::optional<AttentionOperand> mask;
  int64_t heads = 1, seq_q = 0, seq_k = 0, head_dim = 0;
  bool causal = false;  // key j visible to query i iff j <= i (needs seq_q == seq_k)
  // k is K^T, [heads, head_dim, seq_k] (a KV cache that keeps K transposed, as Neuron's
  // token-generation kernels do): K^T blocks load straight into SBUF, no TensorE transposes.
  bool k_transposed = false;
  float scale = 0.0f;   // <= 0: 1/sqrt(head_dim)
  DType dtype = DType::BF16;
  int64_t head_begin = 0, head_end = -1;  // -1: all heads
};
void attention(KernelBuilder& kb, const AttentionSpec& spec);

KernelDef attention_def();

}  // namespace trnsim::kernels
