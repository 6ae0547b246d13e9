// Decomposition: rewrites ops the lowering has no kernel for into ones it has. Each op's
// rewrite is its unit's OpRules::decompose (compiler/ops/), built from decompose_steps.h; e.g.
//   Gemm -> [Transpose] MatMul [Mul alpha] [Add beta*C];  Conv -> Pad + strided Slices (im2col)
//   + Concat + Reshape + MatMul + Add;  MaxPool/AveragePool -> Pad + Slices + Max/Add chains;
//   BatchNormalization (inference) -> Mul + Add with folded constants;  Softmax/Reduce*/
//   LayerNormalization over axes other than the trailing ones -> Transpose/Reshape around the
//   trailing-axis form;  Gather with constant indices -> Slices.
#pragma once
#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

void decompose(Graph& g);

}  // namespace trnsim::compiler
