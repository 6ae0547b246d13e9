// BatchNormalization (inference): constant statistics fold into one per-channel Mul + Add;
// statistics computed at run time become (x - mean) * scale / sqrt(var + eps) + bias.
#include <cmath>

#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

void infer(Graph& g, const Node& n) {
  if (n.i("training_mode", 0)) throw UnsupportedError(fmt::format("unsupported: op BatchNormalization (attribute training_mode=1) at node '{}'", n.name));
  if (n.outputs.size() > 1) throw UnsupportedError(fmt::format("unsupported: op BatchNormalization (running-statistics outputs) at node '{}'", n.name));
  infer_same(g, n);
}

// Parameters computed at run time: (x - mean) * (scale / sqrt(var + eps)) + bias, each
// per-channel vector reshaped to [C, 1, ...] to broadcast over the spatial axes.
void batchnorm_runtime(GraphEditor& e, const Node& n) {
  const Shape xs = shape_of(e.graph(), n.inputs[0]);
  if (xs.size() < 2) throw ShapeError(fmt::format("node '{}': BatchNormalization needs an input of rank >= 2", n.name));
  Shape ps = {xs[1]};
  for (size_t i = 2; i < xs.size(); ++i) ps.push_back(1);
  auto param = [&](size_t i) { return reshape(e, n.name + ".param", n.inputs[i], ps); };
  std::string d = e.add(OpKind::Add, n.name + ".eps", {param(4), e.constant("eps", {}, {n.f("epsilon", 1e-5)})});
  d = e.add(OpKind::Div, n.name + ".scale", {param(1), e.add(OpKind::Sqrt, n.name + ".std", {d})});
  std::string y = e.add(OpKind::Sub, n.name + ".center", {n.inputs[0], param(3)});
  y = e.add(OpKind::Mul, n.name + ".norm", {y, d});
  finish(e, n, e.add(OpKind::Add, n.name + ".shift", {y, param(2)}));
}

bool decompose(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  for (size_t i = 1; i < 5; ++i)
    if (!g.is_const(n.inputs[i])) {
      batchnorm_runtime(e, n);
      return true;
    }
  const auto &sc = *g.tensor(n.inputs[1]).data, &b = *g.tensor(n.inputs[2]).data, &m = *g.tensor(n.inputs[3]).data, &v = *g.tensor(n.inputs[4]).data;
  double eps = n.f("epsilon", 1e-5);
  const Shape xs = shape_of(g, n.inputs[0]);
  Shape ps = {static_cast<int64_t>(sc.size())};
  for (size_t i = 2; i < xs.size(); ++i) ps.push_back(1);
  std::vector<double> scale(sc.size()), shift(sc.size());
  for (size_t c = 0; c < sc.size(); ++c) {
    scale[c] = sc[c] / std::sqrt(v[c] + eps);
    shift[c] = b[c] - m[c] * scale[c];
  }
  std::string y = e.add(OpKind::Mul, n.name + ".scale", {n.inputs[0], e.constant("bn_scale", ps, scale)});
  y = e.add(OpKind::Add, n.name + ".shift", {y, e.constant("bn_shift", ps, shift)});
  finish(e, n, y);
  return true;
}

}  // namespace

void register_batch_norm(OpRegistry& r) {
  r.push_back({.kind = OpKind::BatchNormalization, .name = "BatchNormalization", .cls = OpClass::Compute, .min_inputs = 5, .max_inputs = 5,
               .attributes = {"epsilon", "momentum", "training_mode"}, .rules = {.infer = infer, .decompose = decompose}});
}

}  // namespace trnsim::compiler
