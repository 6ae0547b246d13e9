// LayerNorm as a matmul prologue (pass `norm-prologue`): a standalone LayerNormalization over
// the last axis (constant scale and bias, fp32, rows of at most 1024) whose every reader is a
// MatMul taking it as A is removed; each reader reads the LayerNorm's input instead and
// normalises each row tile of it in SBUF before the cast and transposes (the library kernel's
// steps: bn_stats, bn_aggr, rsqrt, normalise, scale, shift), as Neuron applies a pre-norm
// transformer's LayerNorm. The normalised rows never go through HBM, and when the input is
// resident in SBUF (sbuf_residency.h) nothing does.
// Node attributes written on each reader: prologue_ln (1), prologue_ln_epsilon,
// prologue_ln_scale, prologue_ln_bias (tensor names; "" for no bias). Runs after dead-code,
// which would otherwise drop the scale and bias the attributes name.
#pragma once
#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

inline constexpr int64_t kMaxPrologueRow = 1024;  // one row-major chunk of A (lower_matmul.cpp)

void fuse_norm_prologues(Graph& g);

}  // namespace trnsim::compiler
