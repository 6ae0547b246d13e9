// Element-wise fusion: a chain of element-wise nodes (unary ops, activations, binary ops whose
// other operand is a constant, a broadcast per-row/per-column tensor or any tensor computed
// earlier) becomes ONE node: the chain's first node carries the others as its epilogue, and
// its lowering (lower_elementwise) loads the external inputs of each tile once, applies the
// ops in order on the SBUF tile and stores the chain's output once. The intermediate tensors
// (fp32 in HBM before) disappear, and with them one load and one store per op per tile.
// Every intermediate was an fp32 tensor read back unchanged, so results are bit-identical.
// Matmul epilogues (fusion.h) run first; this pass takes the chains left between them.
#pragma once
#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

void fuse_elementwise(Graph& g);

// Ops that may join a chain after its first node (attribute-free but for GELU's form).
bool chain_op(OpKind k);

}  // namespace trnsim::compiler
