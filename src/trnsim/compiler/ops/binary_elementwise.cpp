// The arithmetic element-wise ops with numpy broadcasting: Add, Sub, Mul, Div, Pow, Mod and the
// n-ary Max, Min, Sum, Mean (a chain of binary ops when they have other than two inputs).
#include <algorithm>
#include <cmath>

#include "trnsim/common/ieee_minmax.h"
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using K = OpKind;
using namespace decomp;

// Sum / Mean / Max / Min of n inputs: a chain of binary ops with numpy broadcasting (Mean:
// the sum times 1/n); one input is a copy.
void variadic(GraphEditor& e, const Node& n) {
  const OpKind bin = n.op == K::Sum || n.op == K::Mean ? K::Add : n.op;
  std::string y = n.inputs[0];
  for (size_t i = 1; i < n.inputs.size(); ++i) y = e.add(bin, n.name, {y, n.inputs[i]});
  if (n.op == K::Mean && n.inputs.size() > 1)
    y = e.add(K::Mul, n.name + ".mean", {y, e.constant("inv_n", {}, {1.0 / static_cast<double>(n.inputs.size())})});
  if (n.inputs.size() == 1) y = e.add(K::Expand, n.name, {y, e.ints("shape", shape_of(e.graph(), y))});
  finish(e, n, y);
}

bool decompose_variadic(GraphEditor& e, const Node& n) {
  variadic(e, n);
  return true;
}

bool decompose_max_min(GraphEditor& e, const Node& n) {
  if (n.inputs.size() == 2) return false;
  variadic(e, n);
  return true;
}

void eval_mean(Graph& g, const Node& n, std::vector<double>& r) {
  eval_broadcast(g, n, r);
  for (auto& v : r) v /= static_cast<double>(n.inputs.size());
}

OpInfo row(OpKind k, std::string_view name, double (*f)(double, double, bool), int max_inputs = 2) {
  return {.kind = k, .name = name, .cls = OpClass::Binary, .min_inputs = max_inputs == 2 ? 2 : 1, .max_inputs = max_inputs,
          .attributes = {}, .rules = binary_rules(f)};
}

}  // namespace

// Mod: fmod=1 is C's fmod, the sign of the dividend; fmod=0 takes the sign of the divisor, as
// Python's % (Mod-13 allows it on integers only; Mod-28 on floats too, as numpy.mod).
void eval_mod(Graph& g, const Node& n, std::vector<double>& r) {
  const Shape& os = g.tensor(n.outputs[0]).shape;
  std::vector<std::vector<int64_t>> st{broadcast_strides(input(g, n, 0).shape, os), broadcast_strides(input(g, n, 1).shape, os)};
  const bool python = n.i("fmod", 0) == 0;
  const auto& a = data(g, n.inputs[0]);
  const auto& b = data(g, n.inputs[1]);
  for_each_index(os, st, [&](int64_t i, const std::vector<int64_t>& off) {
    const double x = a[off[0]], y = b[off[1]];
    double m = std::fmod(x, y);
    if (python && m != 0 && ((m < 0) != (y < 0))) m += y;
    if (python && m == 0) m = std::copysign(0.0, y);
    r[i] = m;
  });
}

void register_binary_elementwise(OpRegistry& r) {
  r.push_back(row(K::Add, "Add", [](double a, double b, bool) { return a + b; }));
  r.push_back(row(K::Sub, "Sub", [](double a, double b, bool) { return a - b; }));
  r.push_back(row(K::Mul, "Mul", [](double a, double b, bool) { return a * b; }));
  r.push_back(row(K::Div, "Div", [](double a, double b, bool integral) { return integral ? (b == 0 ? 0 : std::trunc(a / b)) : a / b; }));
  auto pow = row(K::Pow, "Pow", [](double a, double b, bool) { return std::pow(a, b); });
  pow.rules.infer = infer_broadcast;  // Pow(T, T1): the exponent may have another type
  r.push_back(pow);
  auto mod = row(K::Mod, "Mod", [](double a, double b, bool) { return std::fmod(a, b); });
  mod.attributes = {"fmod"};
  mod.rules.eval = eval_mod;
  r.push_back(mod);
  auto max = row(K::Max, "Max", [](double a, double b, bool) { return ieee_maximum(a, b); }, 64);
  auto min = row(K::Min, "Min", [](double a, double b, bool) { return ieee_minimum(a, b); }, 64);
  max.rules.decompose = min.rules.decompose = decompose_max_min;
  r.push_back(max);
  r.push_back(min);
  auto sum = row(K::Sum, "Sum", [](double a, double b, bool) { return a + b; }, 64);
  auto mean = row(K::Mean, "Mean", [](double a, double b, bool) { return a + b; }, 64);
  sum.rules.decompose = mean.rules.decompose = decompose_variadic;
  mean.rules.eval = eval_mean;
  r.push_back(sum);
  r.push_back(mean);
}

}  // namespace trnsim::compiler
