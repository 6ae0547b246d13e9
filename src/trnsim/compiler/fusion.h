// Fusion: a chain of element-wise ops that consumes a MatMul's result (bias add, scale,
// activation) becomes the MatMul's epilogue, applied to each output tile while it is still on
// chip, instead of a round trip through HBM per op. Fused ops keep their names in the
// epilogue, so the per-op report still lists them (with the time of the node they joined).
#pragma once
#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

void fuse_epilogues(Graph& g);
// Dead-code elimination: nodes whose outputs nobody reads, constants nobody uses.
void eliminate_dead_code(Graph& g);
// Constant folding: every node whose inputs are all constants is evaluated on the host.
// values=false (timing only): a node whose outputs are weight-sized gets shape-only outputs,
// so no weight is read; shape sub-graphs and other small constants are computed as ever.
void fold_constants(Graph& g, bool values = true);

bool epilogue_op(OpKind k);  // element-wise ops the matmul epilogue implements

}  // namespace trnsim::compiler
