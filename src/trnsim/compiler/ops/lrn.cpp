// LRN (cross-channel local response normalisation), from element-wise ops: y = x / (bias +
// alpha / size * sum of x^2 over the channel window [c - floor((size-1)/2), c +
// ceil((size-1)/2)])^beta. The window sum is `size` channel slices of the squared input,
// zero-padded along C, added up.
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

void infer(Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  if (x.size() < 2) throw ShapeError(fmt::format("node '{}': LRN needs an input of rank >= 2 (N, C, ...), got {}", n.name, shape_str(x)));
  const int64_t size = n.i("size", 0);
  if (size < 1) throw ShapeError(fmt::format("node '{}': LRN attribute size = {} (must be >= 1)", n.name, size));
  infer_same(g, n);
}

bool decompose(GraphEditor& e, const Node& n) {
  const Shape xs = shape_of(e.graph(), n.inputs[0]);
  const int64_t size = n.i("size", 0), C = xs[1];
  const double alpha = n.f("alpha", 1e-4), beta = n.f("beta", 0.75), bias = n.f("bias", 1.0);
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  std::string sq = e.add(OpKind::Mul, n.name + ".square", {n.inputs[0], n.inputs[0]});
  std::vector<int64_t> pads(2 * xs.size(), 0);
  pads[1] = before;
  pads[xs.size() + 1] = after;
  std::string padded = size > 1 ? e.add(OpKind::Pad, n.name + ".pad", {sq, e.ints("pads", pads), e.constant("zero", {}, {0.0})}) : sq;
  std::string acc;
  for (int64_t k = 0; k < size; ++k) {
    std::string w = size > 1 ? e.add(OpKind::Slice, n.name + ".window", {padded, e.ints("s", {k}), e.ints("e", {k + C}), e.ints("a", {1})}) : padded;
    acc = acc.empty() ? w : e.add(OpKind::Add, n.name + ".sum", {acc, w});
  }
  std::string d = e.add(OpKind::Mul, n.name + ".scale", {acc, e.constant("alpha", {}, {alpha / static_cast<double>(size)})});
  d = e.add(OpKind::Add, n.name + ".bias", {d, e.constant("bias", {}, {bias})});
  d = e.add(OpKind::Pow, n.name + ".pow", {d, e.constant("beta", {}, {beta})});
  finish(e, n, e.add(OpKind::Div, n.name, {n.inputs[0], d}));
  return true;
}

}  // namespace

void register_lrn(OpRegistry& r) {
  r.push_back({.kind = OpKind::LRN, .name = "LRN", .cls = OpClass::Compute, .min_inputs = 1, .max_inputs = 1,
               .attributes = {"alpha", "beta", "bias", "size"}, .rules = {.infer = infer, .decompose = decompose}});
}

}  // namespace trnsim::compiler
