// Range(start, limit, delta): max(0, ceil((limit - start) / delta)) values, folded on the host
// (its inputs must be constant).
#include <algorithm>
#include <cmath>

#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

void infer(Graph& g, const Node& n) {
  double s = const_scalar(g, n, 0, 0), l = const_scalar(g, n, 1, 0), d = const_scalar(g, n, 2, 1);
  int64_t cnt = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((l - s) / d)));
  set_output(g, n, 0, {cnt}, input(g, n, 0).type);
}

void eval(Graph& g, const Node& n, std::vector<double>& r) {
  double s = const_scalar(g, n, 0, 0), d = const_scalar(g, n, 2, 1);
  for (size_t i = 0; i < r.size(); ++i) r[i] = s + d * static_cast<double>(i);
}

}  // namespace

void register_range(OpRegistry& r) {
  r.push_back({.kind = OpKind::Range, .name = "Range", .cls = OpClass::Shape, .min_inputs = 3, .max_inputs = 3, .attributes = {},
               .revised_after_opset23 = 27,  // Range-27: stash_type, new doc
               .rules = {.infer = infer, .eval = eval}});
}

}  // namespace trnsim::compiler
