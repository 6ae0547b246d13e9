// Element-wise ops with a boolean result: the comparisons Equal, Less, Greater, LessOrEqual,
// GreaterOrEqual, the logical And, Or, Not, and IsNaN.
#include <cmath>

#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using K = OpKind;

void infer_bool(Graph& g, const Node& n) {
  require_one_type(g, n, 0);
  infer_broadcast(g, n);
  g.tensor(n.outputs[0]).type = ElemType::Bool;
}

OpInfo binary(OpKind k, std::string_view name, double (*f)(double, double, bool)) {
  OpInfo i{.kind = k, .name = name, .cls = OpClass::Binary, .min_inputs = 2, .max_inputs = 2, .attributes = {}, .rules = binary_rules(f)};
  i.rules.infer = infer_bool;
  return i;
}

OpInfo unary(OpKind k, std::string_view name, double (*f)(double, const Node&)) {
  OpInfo i{.kind = k, .name = name, .cls = OpClass::Unary, .min_inputs = 1, .max_inputs = 1, .attributes = {}, .rules = unary_rules(f)};
  i.rules.infer = infer_bool;
  return i;
}

}  // namespace

void register_comparison(OpRegistry& r) {
  r.push_back(binary(K::Equal, "Equal", [](double a, double b, bool) -> double { return a == b; }));
  r.push_back(binary(K::Less, "Less", [](double a, double b, bool) -> double { return a < b; }));
  r.push_back(binary(K::Greater, "Greater", [](double a, double b, bool) -> double { return a > b; }));
  r.push_back(binary(K::LessOrEqual, "LessOrEqual", [](double a, double b, bool) -> double { return a <= b; }));
  r.push_back(binary(K::GreaterOrEqual, "GreaterOrEqual", [](double a, double b, bool) -> double { return a >= b; }));
  r.push_back(binary(K::And, "And", [](double a, double b, bool) -> double { return a != 0 && b != 0; }));
  r.push_back(binary(K::Or, "Or", [](double a, double b, bool) -> double { return a != 0 || b != 0; }));
  r.push_back(unary(K::Not, "Not", [](double x, const Node&) -> double { return x == 0 ? 1 : 0; }));
  r.push_back(unary(K::IsNaN, "IsNaN", [](double x, const Node&) -> double { return std::isnan(x) ? 1 : 0; }));
}

}  // namespace trnsim::compiler
