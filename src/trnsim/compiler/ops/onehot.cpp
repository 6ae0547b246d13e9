// OneHot(indices, depth, values[off, on]) along `axis`: Where(index == position, on, off) with
// the positions a constant 0..depth-1 on the new axis; negative indices count from depth, out
// of range ones give all off. depth must be constant.
#include <cmath>

#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

int64_t depth_of(const Graph& g, const Node& n) {
  const double d = const_scalar(g, n, 1, 0);
  if (!(d >= 1 && d < 0x1p62)) throw ShapeError(fmt::format("node '{}': OneHot depth {} (must be >= 1 and below 2^62)", n.name, d));
  return static_cast<int64_t>(d);
}

int64_t axis_of(const Graph& g, const Node& n) {
  // ONNX's shape rule (and onnxruntime) want indices of rank >= 1.
  if (input(g, n, 0).shape.empty())
    throw ShapeError(fmt::format("node '{}': OneHot of rank-0 indices (ONNX needs rank >= 1)", n.name));
  return normalize_axis(n.i("axis", -1), static_cast<int64_t>(input(g, n, 0).shape.size()) + 1, n.name);
}

void infer(Graph& g, const Node& n) {
  Shape s = input(g, n, 0).shape;
  if (numel(input(g, n, 2).shape) != 2) throw ShapeError(fmt::format("node '{}': OneHot values must hold [off, on]", n.name));
  s.insert(s.begin() + axis_of(g, n), depth_of(g, n));
  set_output(g, n, 0, s, input(g, n, 2).type);
}

void eval(Graph& g, const Node& n, std::vector<double>& r) {
  const Shape& os = g.tensor(n.outputs[0]).shape;
  const int64_t a = axis_of(g, n), depth = depth_of(g, n);
  const int64_t inner = numel(Shape(os.begin() + a + 1, os.end()));
  const auto& idx = data(g, n.inputs[0]);
  const auto& v = data(g, n.inputs[2]);
  for (size_t i = 0; i < r.size(); ++i) {
    const int64_t o = static_cast<int64_t>(i) / (depth * inner), d = static_cast<int64_t>(i) / inner % depth, in = static_cast<int64_t>(i) % inner;
    double k = std::trunc(idx[static_cast<size_t>(o * inner + in)]);
    if (k < 0) k += static_cast<double>(depth);
    r[i] = k == static_cast<double>(d) ? v[1] : v[0];
  }
}

bool decompose(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape os = shape_of(g, n.outputs[0]);
  const int64_t a = axis_of(g, n), depth = depth_of(g, n);
  const ElemType it = g.tensor(n.inputs[0]).type;
  // Negative indices count from the end: idx + depth * (idx < 0).
  std::string idx = n.inputs[0];
  std::string zero = e.constant(n.name + ".zero", {}, {0.0}, it);
  std::string neg = e.add(OpKind::Less, n.name + ".negative", {idx, zero});
  idx = e.add(OpKind::Add, n.name + ".index", {idx, e.add(OpKind::Where, n.name + ".wrap", {neg, e.constant(n.name + ".depth", {}, {static_cast<double>(depth)}, it), zero})});
  Shape is = os;
  is[static_cast<size_t>(a)] = 1;
  idx = reshape(e, n.name + ".index", idx, is);
  std::string hit = e.add(OpKind::Equal, n.name + ".hit", {idx, iota_along(e, n.name + ".position", depth, a, static_cast<int64_t>(os.size()), it)});
  const std::string& v = n.inputs[2];
  std::string off = e.add(OpKind::Slice, n.name + ".off", {v, e.ints("s", {0}), e.ints("e", {1}), e.ints("a", {0})});
  std::string on = e.add(OpKind::Slice, n.name + ".on", {v, e.ints("s", {1}), e.ints("e", {2}), e.ints("a", {0})});
  finish(e, n, e.add(OpKind::Where, n.name, {hit, on, off}));
  return true;
}

}  // namespace

void register_onehot(OpRegistry& r) {
  r.push_back({.kind = OpKind::OneHot, .name = "OneHot", .cls = OpClass::Movement, .min_inputs = 3, .max_inputs = 3, .attributes = {"axis"},
               .rules = {.infer = infer, .eval = eval, .decompose = decompose}});
}

}  // namespace trnsim::compiler
