// Lowering of row-wise ops (decomposition has already put the reduced axes last and the
// tensor in [rows, cols] form): Softmax and LayerNormalization through the kernel library,
// Reduce{Sum,Mean,Max,Min} with a tiled VectorE reduction.
#pragma once
#include "trnsim/compiler/lower_context.h"

namespace trnsim::compiler {

void lower_softmax(LowerCtx& ctx);
void lower_layernorm(LowerCtx& ctx);
void lower_reduce(LowerCtx& ctx);

}  // namespace trnsim::compiler
