// LayerNorm as a matmul prologue (pass `norm-prologue`), as Neuron applies a pre-norm
// transformer's LayerNorm: a standalone LayerNormalization over the last axis (fp32, constant
// scale and shift, rows of at most 1024: one row-major chunk of A) whose every reader is a
// MatMul taking it as A (directly or through Reshapes) with a constant [K, N] weight of its own
// is removed. Each reader reads the LayerNorm's input instead and normalises each row tile of
// it in SBUF, (x - mean) rstd as the library kernel computes it (bn_stats, bn_aggr, rsqrt,
// normalise on ScalarE, written at the operand width in place of A's cast), before its
// transposes. The scale and shift fold into the reader at compile time, as BatchNormalization
// folds into a conv (fold_batchnorm.h): LN(x) W = ((x - mean) rstd) (diag(scale) W) + shift W,
// the last joining the reader's bias. The normalised rows never go through HBM, and when the
// input is resident in SBUF (sbuf_residency.h) nothing does.
// Node attributes written on each reader: prologue_ln (1), prologue_ln_epsilon. Runs after
// dead-code (which drops what this pass leaves unread) and before core-split and
// operand-storage (A stays fp32: the statistics are taken at full precision).
#pragma once
#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

inline constexpr int64_t kMaxPrologueRow = 1024;  // one row-major chunk of A (lower_matmul.cpp)

void fuse_norm_prologues(Graph& g);

}  // namespace trnsim::compiler
