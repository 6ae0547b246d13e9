// Flatten: the input as [prod(shape[:axis]), prod(shape[axis:])], a Reshape.
#include <algorithm>

#include "trnsim/compiler/lower_elementwise.h"
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

void infer(Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  const auto rank = static_cast<int64_t>(x.size());
  int64_t a = n.i("axis", 1);
  if (a < 0) a += rank;
  if (a < 0 || a > rank) throw ShapeError(fmt::format("node '{}': Flatten axis out of range", n.name));
  int64_t l = 1;
  for (int64_t i = 0; i < a; ++i) l *= x[i];
  set_output(g, n, 0, {l, numel(x) / std::max<int64_t>(l, 1)}, input(g, n, 0).type);
}

}  // namespace

void register_flatten(OpRegistry& r) {
  r.push_back({.kind = OpKind::Flatten, .name = "Flatten", .cls = OpClass::Movement, .min_inputs = 1, .max_inputs = 1, .attributes = {"axis"},
               .rules = {.infer = infer,
                         .eval = [](Graph& g, const Node& n, std::vector<double>& r) { r = data(g, n.inputs[0]).values(); },
                         .decompose = [](GraphEditor& e, const Node& n) { decomp::finish(e, n, n.inputs[0]); return true; },
                         .lower = lower_movement}});
}

}  // namespace trnsim::compiler
