// Attention fusion: the scaled-dot-product attention that PyTorch exports for BERT and Llama,
//   MatMul(Q, K^T) [-> Mul/Div by a scalar constant] [-> Add(mask)] -> Softmax(last axis)
//   [-> Cast to the same float type...] -> MatMul(., V) [-> Transpose],
// becomes one FusedAttention node, lowered onto the flash kernel (kernels/attention.h): the
// [.., seq, seq] scores never go through HBM. Transposes that feed Q, K^T and V (the
// [B,S,H,D] -> [B,H,S,D] head split) and the one that consumes the output are absorbed as
// strides, so those copies disappear too (dead-code removes them when nothing else reads them).
//
// The node: inputs {q, k, v[, mask]} (the tensors read, possibly pre-transpose), one output;
// attributes batch (the leading axes, flattened into the kernel's heads), dims (seq_q, seq_k,
// head_dim), q/k/v/out_strides
// (element strides of the logical [batch..., seq, head_dim] operand over its row-major input
// tensor), mask_strides ([batch..., seq_q, seq_k], 0 where broadcast), scale, and fused (the
// names of the nodes replaced, for the per-op report, joined by ", ").
#pragma once
#include <string>
#include <vector>

#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

// Rewrites every match; returns how many attention blocks were fused. The output Transpose is
// absorbed on any number of cores: split by heads, the cores' interleaved writes into
// [B, S, H, D] share no byte, and the kernel builder's exact overlap test
// (kernels/access_overlap.h) lets them run concurrently.
int fuse_attention(Graph& g);

// The names of the nodes a FusedAttention node replaced.
std::vector<std::string> fused_attention_members(const Node& n);

}  // namespace trnsim::compiler
