// Decomposition: rewrites ops the lowering has no kernel for into ones it has.
//   Gemm -> [Transpose] MatMul [Mul alpha] [Add beta*C];  Conv -> Pad + strided Slices (im2col)
//   + Concat + Reshape + MatMul + Add;  MaxPool/AveragePool -> Pad + Slices + Max/Add chains;
//   GlobalAveragePool -> ReduceMean;  BatchNormalization (inference) -> Mul + Add with folded
//   constants;  Flatten/Squeeze/Unsqueeze/Identity -> Reshape;  Split -> Slices;
//   LogSoftmax -> Softmax + Log;  Softmax/Reduce*/LayerNormalization over axes other than the
//   trailing ones -> Transpose/Reshape around the trailing-axis form;  Clip -> Max + Min;
//   Gather with constant indices -> Slices.
#pragma once
#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

void decompose(Graph& g);

}  // namespace trnsim::compiler
