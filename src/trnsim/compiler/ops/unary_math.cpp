// The element-wise unary functions with a kernel of their own (ScalarE activation or VectorE
// ALU ops, lower_elementwise): Neg, Abs, Sqrt, Reciprocal, Exp, Log, Erf, Tanh, Relu, Sigmoid,
// Gelu, Softplus, Sin, Cos, Sign, LeakyRelu, HardSigmoid, HardSwish, and the roundings Floor,
// Ceil, Round (not split across cores: they use tile rings of their own).
#include <algorithm>
#include <cmath>

#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using K = OpKind;

OpInfo row(OpKind k, std::string_view name, double (*f)(double, const Node&), std::vector<std::string_view> attrs = {}) {
  return {.kind = k, .name = name, .cls = OpClass::Unary, .min_inputs = 1, .max_inputs = 1, .attributes = std::move(attrs),
          .rules = unary_rules(f)};
}

double gelu(double x, const Node& n) {
  if (n.s("approximate", "none") == "tanh") return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
}

OpInfo rounding(OpKind k, std::string_view name, double (*f)(double, const Node&)) {
  OpInfo i = row(k, name, f);
  i.rules.parallel_units = nullptr;
  return i;
}

}  // namespace

void register_unary_math(OpRegistry& r) {
  r.push_back(row(K::Neg, "Neg", [](double x, const Node&) { return -x; }));
  r.push_back(row(K::Abs, "Abs", [](double x, const Node&) { return std::fabs(x); }));
  r.push_back(row(K::Sqrt, "Sqrt", [](double x, const Node&) { return std::sqrt(x); }));
  r.push_back(row(K::Reciprocal, "Reciprocal", [](double x, const Node&) { return 1.0 / x; }));
  r.push_back(row(K::Exp, "Exp", [](double x, const Node&) { return std::exp(x); }));
  r.push_back(row(K::Log, "Log", [](double x, const Node&) { return std::log(x); }));
  r.push_back(row(K::Erf, "Erf", [](double x, const Node&) { return std::erf(x); }));
  r.push_back(row(K::Tanh, "Tanh", [](double x, const Node&) { return std::tanh(x); }));
  // NaN propagates (IEEE, ONNX, onnxruntime): a comparison alone would map it to 0.
  r.push_back(row(K::Relu, "Relu", [](double x, const Node&) { return x > 0 || std::isnan(x) ? x : 0; }));
  r.push_back(row(K::Sigmoid, "Sigmoid", [](double x, const Node&) { return 1.0 / (1.0 + std::exp(-x)); }));
  r.push_back(row(K::Gelu, "Gelu", gelu, {"approximate"}));
  r.push_back(row(K::Softplus, "Softplus", [](double x, const Node&) { return std::log1p(std::exp(x)); }));
  r.push_back(row(K::Sin, "Sin", [](double x, const Node&) { return std::sin(x); }));
  r.push_back(row(K::Cos, "Cos", [](double x, const Node&) { return std::cos(x); }));
  r.push_back(row(K::Sign, "Sign", [](double x, const Node&) -> double { return std::isnan(x) ? x : x > 0 ? 1 : x < 0 ? -1 : 0; }));
  r.push_back(rounding(K::Floor, "Floor", [](double x, const Node&) { return std::floor(x); }));
  r.push_back(rounding(K::Ceil, "Ceil", [](double x, const Node&) { return std::ceil(x); }));
  // default rounding mode: halves to even
  r.push_back(rounding(K::Round, "Round", [](double x, const Node&) { return std::nearbyint(x); }));
  r.push_back(row(K::LeakyRelu, "LeakyRelu", [](double x, const Node& n) { return x >= 0 ? x : x * n.f("alpha", 0.01); }, {"alpha"}));
  r.push_back(row(K::HardSigmoid, "HardSigmoid",
                  [](double x, const Node& n) {
                    const double y = n.f("alpha", 0.2) * x + n.f("beta", 0.5);
                    return std::isnan(y) ? y : std::clamp(y, 0.0, 1.0);
                  }, {"alpha", "beta"}));
  r.push_back(row(K::HardSwish, "HardSwish", [](double x, const Node&) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); }));
}

}  // namespace trnsim::compiler
