// SBUF placement across node boundaries: a MatMul whose predecessor kernel sits in the lower
// half of SBUF (every kernel allocates from the bottom) is marked `sbuf_upper` and keeps its
// tiles in the upper half, and the next MatMul in the lower half again, so that consecutive
// kernels touch disjoint SBUF and the runtime can start a node's weight loads while its
// predecessor still computes (runtime/program_link.h). Matmul kernels use at most half of SBUF.
#pragma once
#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

void place_sbuf_halves(Graph& g);

}  // namespace trnsim::compiler
