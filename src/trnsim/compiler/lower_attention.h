// Lowering of a FusedAttention node (fuse_attention.h) onto the flash-attention kernel, its
// heads (the flattened batch axes) divided among the node's NeuronCores.
#pragma once
#include "trnsim/compiler/lower_context.h"

namespace trnsim::compiler {

void lower_attention(LowerCtx& ctx);

}  // namespace trnsim::compiler
