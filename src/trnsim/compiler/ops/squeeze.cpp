// Squeeze and Unsqueeze (axes as an attribute before opset 13, an input after): Reshapes.
#include <algorithm>

#include "trnsim/compiler/lower_elementwise.h"
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

void infer_unsqueeze(Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  if (!n.has("axes") && !has_input(n, 1))  // unlike Squeeze's, Unsqueeze's axes are required
    throw ShapeError(fmt::format("node '{}' (Unsqueeze): no axes (an attribute before opset 13, input 1 from 13)", n.name));
  auto axes = unsqueeze_axes(g, n, static_cast<int64_t>(x.size()));
  Shape s = x;
  for (auto a : axes) s.insert(s.begin() + a, 1);
  set_output(g, n, 0, s, input(g, n, 0).type);
}

void infer_squeeze(Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  auto axes = squeeze_axes(g, n, x);
  Shape s;
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i)
    if (std::find(axes.begin(), axes.end(), i) == axes.end()) s.push_back(x[i]);
  set_output(g, n, 0, s, input(g, n, 0).type);
}

OpInfo row(OpKind k, std::string_view name, void (*infer)(Graph&, const Node&)) {
  return {.kind = k, .name = name, .cls = OpClass::Movement, .min_inputs = 1, .max_inputs = 2, .attributes = {"axes"},
          .rules = {.infer = infer,
                    .eval = [](Graph& g, const Node& n, std::vector<double>& r) { r = data(g, n.inputs[0]).values(); },
                    .decompose = [](GraphEditor& e, const Node& n) { decomp::finish(e, n, n.inputs[0]); return true; },
                    .lower = lower_movement}};
}

}  // namespace

void register_squeeze(OpRegistry& r) {
  r.push_back(row(OpKind::Unsqueeze, "Unsqueeze", infer_unsqueeze));
  r.push_back(row(OpKind::Squeeze, "Squeeze", infer_squeeze));
}

}  // namespace trnsim::compiler
