// GELU recognition: exporters that target opsets before 20 write GELU out as five to eight
// element-wise nodes (x / sqrt 2, Erf, + 1, * x, * 0.5, or the tanh form with x^3). This pass
// finds any connected group of element-wise nodes with one varying input x and scalar
// constants elsewhere, evaluates it on the host at sample points and, when it equals erf- or
// tanh-GELU there, replaces it by one Gelu node: one ScalarE activation (the library's GELU),
// which the matmul epilogue fusion then puts on the PSUM evacuation. No list of node shapes:
// any algebraically equivalent spelling is found.
#pragma once
#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

void fuse_gelu(Graph& g);

}  // namespace trnsim::compiler
