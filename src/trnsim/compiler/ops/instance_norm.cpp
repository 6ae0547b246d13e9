// InstanceNormalization (x [N, C, spatial...]) and GroupNormalization (num_groups; scale and
// bias per group at opset 18, per channel from 21): each instance or group of channels is one
// row of the fused LayerNormalization kernel (x viewed as [N*C or N*G, rest], unit scale, zero
// bias), then the per-channel scale and bias element-wise.
#include "trnsim/compiler/filled.h"
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

int64_t groups(const Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  if (n.op == OpKind::InstanceNormalization) return x[1];
  const int64_t G = n.i("num_groups", 0);
  if (G < 1 || x[1] % G != 0) throw ShapeError(fmt::format("node '{}': num_groups {} does not divide {} channels", n.name, G, x[1]));
  return G;
}

void infer(Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  if (x.size() < 2) throw ShapeError(fmt::format("node '{}': {} needs an input [N, C, ...], got {}", n.name, op_name(n.op), shape_str(x)));
  if (n.i("stash_type", 1) != 1) unsupported(n, fmt::format("attribute stash_type = {}", n.i("stash_type", 1)));
  const int64_t G = groups(g, n);
  for (size_t i = 1; i < 3; ++i) {
    const int64_t k = numel(input(g, n, i).shape);
    if (k != x[1] && k != G) throw ShapeError(fmt::format("node '{}': input '{}' has {} values for {} channels", n.name, n.inputs[i], k, x[1]));
  }
  infer_same(g, n);
}

// Scale or bias as [C, 1, ...] (per group: each value repeated for its C / G channels).
std::string per_channel(GraphEditor& e, const Node& n, size_t i, const Shape& x, int64_t G) {
  std::string p = n.inputs[i];
  if (numel(shape_of(e.graph(), p)) != x[1]) {
    p = reshape(e, n.name + ".param", p, {G, 1});
    p = e.add(OpKind::Expand, n.name + ".param", {p, e.ints("shape", {G, x[1] / G})});
  }
  Shape ps = {x[1]};
  for (size_t d = 2; d < x.size(); ++d) ps.push_back(1);
  return reshape(e, n.name + ".param", p, ps);
}

bool decompose(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape x = shape_of(g, n.inputs[0]);
  const int64_t G = groups(g, n), rows = x[0] * G, cols = numel(x) / std::max<int64_t>(rows, 1);
  if (numel(x) == 0) {
    g.tensor(n.outputs[0]).data = std::vector<double>{};
    return true;
  }
  std::string y = reshape(e, n.name + ".rows", n.inputs[0], {rows, cols});
  const std::string what = fmt::format("node '{}': a row of {} values", n.name, cols);
  std::string one = e.constant(n.name + ".unit", {cols}, filled(cols, 1.0, what));
  std::string zero = e.constant(n.name + ".zero", {cols}, filled(cols, 0.0, what));
  y = e.add(OpKind::LayerNormalization, n.name, {y, one, zero}, {{"axis", int64_t{-1}}, {"epsilon", n.f("epsilon", 1e-5)}});
  y = reshape(e, n.name + ".back", y, x);
  y = e.add(OpKind::Mul, n.name + ".scale", {y, per_channel(e, n, 1, x, G)});
  finish(e, n, e.add(OpKind::Add, n.name + ".bias", {y, per_channel(e, n, 2, x, G)}));
  return true;
}

}  // namespace

void register_instance_norm(OpRegistry& r) {
  r.push_back({.kind = OpKind::InstanceNormalization, .name = "InstanceNormalization", .cls = OpClass::Compute, .min_inputs = 3, .max_inputs = 3,
               .attributes = {"epsilon"}, .rules = {.infer = infer, .decompose = decompose}});
  r.push_back({.kind = OpKind::GroupNormalization, .name = "GroupNormalization", .cls = OpClass::Compute, .min_inputs = 3, .max_inputs = 3,
               .attributes = {"epsilon", "num_groups", "stash_type"}, .rules = {.infer = infer, .decompose = decompose}});
}

}  // namespace trnsim::compiler
