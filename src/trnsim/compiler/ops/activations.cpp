// Activations without a kernel of their own, decomposed into element-wise ops: Elu, Selu,
// Celu, ThresholdedRelu, Softsign, Shrink and PRelu. Where selects, so the branch not taken
// (e.g. exp of a large x) never reaches the result. Constant inputs fold with the scalar
// function.
#include <algorithm>
#include <cmath>

#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using K = OpKind;

// The element-wise builder of one activation node.
struct Act {
  GraphEditor& e;
  const Node& n;
  std::string x = n.inputs[0];
  std::string c(double v) { return e.constant(n.name + ".c", {}, {v}, e.graph().tensor(x).type); }
  std::string op(OpKind k, std::vector<std::string> in) { return e.add(k, n.name, std::move(in)); }
  // alpha * (exp(x / scale) - 1), the negative branch of Elu / Selu / Celu
  std::string em1(double alpha, double scale) {
    std::string xs = scale == 1.0 ? x : op(K::Div, {x, c(scale)});
    return op(K::Mul, {op(K::Sub, {op(K::Exp, {xs}), c(1.0)}), c(alpha)});
  }
  bool done(const std::string& y) {
    decomp::finish(e, n, y);
    return true;
  }
};

constexpr double kSeluAlpha = 1.67326319217681884765625, kSeluGamma = 1.05070102214813232421875;

OpInfo row(OpKind k, std::string_view name, double (*f)(double, const Node&), bool (*d)(GraphEditor&, const Node&),
           std::vector<std::string_view> attrs) {
  OpInfo i{.kind = k, .name = name, .cls = OpClass::Unary, .min_inputs = 1, .max_inputs = 1, .attributes = std::move(attrs),
           .rules = unary_rules(f)};
  i.rules.decompose = d;
  return i;
}

}  // namespace

void register_activations(OpRegistry& r) {
  r.push_back(row(
      K::Elu, "Elu", [](double x, const Node& n) { return x > 0 ? x : n.f("alpha", 1.0) * std::expm1(x); },
      [](GraphEditor& e, const Node& n) {
        Act a{e, n};
        return a.done(a.op(K::Where, {a.op(K::Greater, {a.x, a.c(0.0)}), a.x, a.em1(n.f("alpha", 1.0), 1.0)}));
      },
      {"alpha"}));
  r.push_back(row(
      K::Selu, "Selu",
      [](double x, const Node& n) { return n.f("gamma", kSeluGamma) * (x > 0 ? x : n.f("alpha", kSeluAlpha) * std::expm1(x)); },
      [](GraphEditor& e, const Node& n) {
        Act a{e, n};
        std::string inner = a.op(K::Where, {a.op(K::Greater, {a.x, a.c(0.0)}), a.x, a.em1(n.f("alpha", kSeluAlpha), 1.0)});
        return a.done(a.op(K::Mul, {inner, a.c(n.f("gamma", kSeluGamma))}));
      },
      {"alpha", "gamma"}));
  r.push_back(row(
      K::Celu, "Celu",
      [](double x, const Node& n) {
        const double al = n.f("alpha", 1.0);
        return std::max(0.0, x) + std::min(0.0, al * std::expm1(x / al));
      },
      [](GraphEditor& e, const Node& n) {
        Act a{e, n};
        const double al = n.f("alpha", 1.0);
        return a.done(a.op(K::Add, {a.op(K::Max, {a.x, a.c(0.0)}), a.op(K::Min, {a.em1(al, al), a.c(0.0)})}));
      },
      {"alpha"}));
  r.push_back(row(
      K::ThresholdedRelu, "ThresholdedRelu", [](double x, const Node& n) { return x > n.f("alpha", 1.0) ? x : 0; },
      [](GraphEditor& e, const Node& n) {
        Act a{e, n};
        return a.done(a.op(K::Where, {a.op(K::Greater, {a.x, a.c(n.f("alpha", 1.0))}), a.x, a.c(0.0)}));
      },
      {"alpha"}));
  r.push_back(row(
      K::Softsign, "Softsign", [](double x, const Node&) { return x / (1 + std::fabs(x)); },
      [](GraphEditor& e, const Node& n) {
        Act a{e, n};
        return a.done(a.op(K::Div, {a.x, a.op(K::Add, {a.op(K::Abs, {a.x}), a.c(1.0)})}));
      },
      {}));
  r.push_back(row(
      K::Shrink, "Shrink",
      [](double x, const Node& n) {
        const double l = n.f("lambd", 0.5), b = n.f("bias", 0.0);
        return x < -l ? x + b : x > l ? x - b : 0;
      },
      [](GraphEditor& e, const Node& n) {
        Act a{e, n};
        const double l = n.f("lambd", 0.5), b = n.f("bias", 0.0);
        std::string hi = a.op(K::Where, {a.op(K::Greater, {a.x, a.c(l)}), a.op(K::Sub, {a.x, a.c(b)}), a.c(0.0)});
        return a.done(a.op(K::Where, {a.op(K::Less, {a.x, a.c(-l)}), a.op(K::Add, {a.x, a.c(b)}), hi}));
      },
      {"bias", "lambd"}));
  // PRelu: the slope broadcast to x (unidirectional).
  OpInfo prelu{.kind = K::PRelu, .name = "PRelu", .cls = OpClass::Binary, .min_inputs = 2, .max_inputs = 2, .attributes = {},
               .rules = binary_rules([](double a, double b, bool) { return a < 0 ? a * b : a; })};
  prelu.rules.decompose = [](GraphEditor& e, const Node& n) {
    Act a{e, n};
    return a.done(a.op(K::Where, {a.op(K::Less, {a.x, a.c(0.0)}), a.op(K::Mul, {a.x, n.inputs[1]}), a.x}));
  };
  r.push_back(prelu);
}

}  // namespace trnsim::compiler
