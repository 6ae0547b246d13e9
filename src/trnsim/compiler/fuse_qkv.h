// QKV fusion: the three projections that feed one FusedAttention node (MatMuls of the same
// activation by constant [K, N] weights, the same epilogue with per-column constant operands,
// read only through Reshapes by the attention) become one MatMul by the [K, 3N] concatenated
// weight, and the attention reads Q, K and V as column ranges of its [.., 3N] output (an
// element offset per operand, row strides tripled). One matmul of three times the width keeps
// TensorE busier (longer moving streams per stationary load, one fill and drain instead of
// three, A loaded and transposed once), as the Neuron compiler and NKI kernels fuse them.
// Every output element is the same sum in the same K order as in the separate projections.
#pragma once
#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

// Rewrites every match; returns how many attention blocks' projections were fused.
int fuse_qkv(Graph& g);

}  // namespace trnsim::compiler
