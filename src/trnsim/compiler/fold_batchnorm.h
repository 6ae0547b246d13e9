// BatchNormalization folding: an inference BatchNormalization whose input is a Conv's only
// use, with constant statistics, folds into that Conv's constant weight and bias before
// decomposition, as Neuron's compiler (and PyTorch's exporter) fold it: per output channel m,
// W'[m] = W[m] s[m] and B'[m] = B[m] s[m] + t[m], with s = scale / sqrt(var + eps) and
// t = bias - mean s. The conv then carries no scale/shift epilogue (two VectorE passes over
// every result band) and its Relu / residual Add fuse as after any conv. Timing-only compiles
// keep the folded weight shape-only (no values), as every weight there.
#pragma once
#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

void fold_batchnorm(Graph& g);

}  // namespace trnsim::compiler
