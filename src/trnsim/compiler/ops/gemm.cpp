// Gemm: alpha * op(A) op(B) + beta * C, decomposed into [Transpose] MatMul [Mul alpha] [Add C].
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

void infer(Graph& g, const Node& n) {
  Shape a = input(g, n, 0).shape, b = input(g, n, 1).shape;
  if (a.size() != 2 || b.size() != 2) throw ShapeError(fmt::format("node '{}': Gemm needs 2-D operands", n.name));
  if (n.i("transA", 0)) std::swap(a[0], a[1]);
  if (n.i("transB", 0)) std::swap(b[0], b[1]);
  if (a[1] != b[0]) throw ShapeError(fmt::format("node '{}': Gemm inner sizes {} and {} differ", n.name, a[1], b[0]));
  set_output(g, n, 0, {a[0], b[1]}, input(g, n, 0).type);
}

bool decompose(GraphEditor& e, const Node& n) {
  std::string a = n.inputs[0], b = n.inputs[1];
  if (n.i("transA", 0)) a = transpose(e, n.name + ".transA", a, {1, 0});
  if (n.i("transB", 0)) b = transpose(e, n.name + ".transB", b, {1, 0});
  std::string y = e.add(OpKind::MatMul, n.name, {a, b});
  double alpha = n.f("alpha", 1.0), beta = n.f("beta", 1.0);
  if (alpha != 1.0) y = e.add(OpKind::Mul, n.name + ".alpha", {y, e.constant("alpha", {}, {alpha})});
  if (has_input(n, 2) && beta != 0.0) {
    std::string c = n.inputs[2];
    if (beta != 1.0) c = e.add(OpKind::Mul, n.name + ".beta", {c, e.constant("beta", {}, {beta})});
    y = e.add(OpKind::Add, n.name + ".bias", {y, c});
  }
  finish(e, n, y);
  return true;
}

}  // namespace

void register_gemm(OpRegistry& r) {
  r.push_back({.kind = OpKind::Gemm, .name = "Gemm", .cls = OpClass::Compute, .min_inputs = 2, .max_inputs = 3,
               .attributes = {"alpha", "beta", "transA", "transB"}, .rules = {.infer = infer, .decompose = decompose}});
}

}  // namespace trnsim::compiler
