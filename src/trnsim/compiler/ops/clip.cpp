// Clip: x limited to [min, max] (attributes before opset 11, optional inputs after), as a
// Max and a Min with broadcast scalars.
#include <algorithm>
#include <cmath>

#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

void eval(Graph& g, const Node& n, std::vector<double>& r) {
  const auto& x = data(g, n.inputs[0]);
  double lo = n.has("min") ? n.f("min", 0) : const_scalar(g, n, 1, -INFINITY);
  double hi = n.has("max") ? n.f("max", 0) : const_scalar(g, n, 2, INFINITY);
  for (size_t i = 0; i < r.size(); ++i) r[i] = std::min(std::max(x[i], lo), hi);
}

bool decompose(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  // Bounds computed at run time are element-wise Max/Min with a broadcast scalar.
  auto bound = [&](size_t i) { return has_input(n, i) && !g.is_const(n.inputs[i]); };
  std::string y = n.inputs[0];
  if (bound(1) || bound(2)) {
    if (has_input(n, 1)) y = e.add(OpKind::Max, n.name + ".min", {y, n.inputs[1]});
    if (has_input(n, 2)) y = e.add(OpKind::Min, n.name + ".max", {y, n.inputs[2]});
    finish(e, n, y);
    return true;
  }
  double lo = n.has("min") ? n.f("min", 0) : const_scalar(g, n, 1, -INFINITY);
  double hi = n.has("max") ? n.f("max", 0) : const_scalar(g, n, 2, INFINITY);
  // Only the bounds that change nothing are dropped: a min of -inf, a max of +inf, or NaN (which
  // std::max/min in `eval` and onnxruntime ignore). A min of +inf (or a max of -inf) clamps every
  // element; it was dropped with the others (silently wrong).
  if (!std::isnan(lo) && lo != -INFINITY) y = e.add(OpKind::Max, n.name + ".min", {y, e.constant("lo", {}, {lo})});
  if (!std::isnan(hi) && hi != INFINITY) y = e.add(OpKind::Min, n.name + ".max", {y, e.constant("hi", {}, {hi})});
  finish(e, n, y);
  return true;
}

}  // namespace

void register_clip(OpRegistry& r) {
  OpInfo i{.kind = OpKind::Clip, .name = "Clip", .cls = OpClass::Unary, .min_inputs = 1, .max_inputs = 3, .attributes = {"min", "max"},
           .rules = unary_rules(nullptr)};
  i.rules.eval = eval;
  i.rules.decompose = decompose;
  r.push_back(i);
}

}  // namespace trnsim::compiler
