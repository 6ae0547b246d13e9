#include "trnsim/compiler/sbuf_placement.h"

namespace trnsim::compiler {

void place_sbuf_halves(Graph& g) {
  bool prev_upper = false;
  for (Node& n : g.nodes) {
    if (n.op == OpKind::Reshape) continue;  // an alias: no kernel
    const bool upper = (n.op == OpKind::MatMul || n.op == OpKind::MatMulMx || n.op == OpKind::ConvGemm) && !prev_upper;
    if (upper) n.attrs["sbuf_upper"] = int64_t{1};
    else n.attrs.erase("sbuf_upper");
    prev_upper = upper;
  }
}

}  // namespace trnsim::compiler
