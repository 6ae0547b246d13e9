#include "trnsim/compiler/fuse_gelu.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace trnsim::compiler {

namespace {

constexpr size_t kMaxNodes = 10;     // GELU spellings take 5 (erf) to 8 (tanh) nodes
constexpr double kTolerance = 1e-6;  // relative to max(1, |gelu(x)|), over the sample points

bool candidate_op(OpKind k) {
  switch (k) {
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Pow:
    case OpKind::Erf: case OpKind::Tanh: case OpKind::Sqrt: case OpKind::Neg: return true;
    default: return false;
  }
}

std::optional<double> scalar_const(const Graph& g, const std::string& t) {
  if (!g.is_const(t)) return std::nullopt;
  const auto& d = *g.tensor(t).data;
  if (d.size() != 1) return std::nullopt;
  return d[0];
}

double apply(OpKind k, double a, double b) {
  switch (k) {
    case OpKind::Add: return a + b;
    case OpKind::Sub: return a - b;
    case OpKind::Mul: return a * b;
    case OpKind::Div: return a / b;
    case OpKind::Pow: return std::pow(a, b);
    case OpKind::Erf: return std::erf(a);
    case OpKind::Tanh: return std::tanh(a);
    case OpKind::Sqrt: return std::sqrt(a);
    case OpKind::Neg: return -a;
    default: return NAN;
  }
}

// Value of `out` for x = v, evaluating the nodes (indices, topological) of the region.
double evaluate(const Graph& g, const std::vector<size_t>& region, const std::string& x, const std::string& out, double v) {
  std::map<std::string, double> val{{x, v}};
  for (size_t i : region) {
    const Node& n = g.nodes[i];
    auto in = [&](size_t k) { auto it = val.find(n.inputs[k]); return it != val.end() ? it->second : *scalar_const(g, n.inputs[k]); };
    val[n.outputs[0]] = apply(n.op, in(0), n.inputs.size() > 1 ? in(1) : 0.0);
  }
  return val.at(out);
}

double gelu(double x, bool tanh_form) {
  if (tanh_form) return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
}

// The sample points: steps of 1/8 over [-6, 6], where the spellings differ, and beyond it to
// +-20, where a term too small to show within 6 (5e-13 x^8: 6e-7 at 6, 1.3e-2 at 20) does. A
// GELU spelled with exp() stays finite in double there. Not a proof of equality: a perturbation
// below float precision over [-20, 20] would still pass.
std::vector<double> sample_points() {
  std::vector<double> v;
  for (int s = -48; s <= 48; ++s) v.push_back(s / 8.0);
  for (double x : {7.0, 8.0, 10.0, 12.0, 16.0, 20.0}) {
    v.push_back(x);
    v.push_back(-x);
  }
  return v;
}

std::optional<bool> matches_gelu(const Graph& g, const std::vector<size_t>& region, const std::string& x, const std::string& out) {
  static const std::vector<double> points = sample_points();
  for (bool tanh_form : {false, true}) {
    bool ok = true;
    for (size_t i = 0; i < points.size() && ok; ++i) {
      const double v = points[i];
      const double want = gelu(v, tanh_form), got = evaluate(g, region, x, out, v);
      ok = std::isfinite(got) && std::abs(got - want) <= kTolerance * std::max(1.0, std::abs(want));
    }
    if (ok) return tanh_form;
  }
  return std::nullopt;
}

// The element-wise nodes reachable from x through nodes whose other inputs are x, scalar
// constants or outputs already in the region; indices in topological order.
std::vector<size_t> grow(const Graph& g, const std::string& x, const std::map<std::string, std::vector<size_t>>& cons) {
  std::set<std::string> have{x};
  std::set<size_t> region;
  bool changed = true;
  while (changed && region.size() < kMaxNodes) {
    changed = false;
    for (const std::string& t : std::vector<std::string>(have.begin(), have.end())) {
      auto it = cons.find(t);
      if (it == cons.end()) continue;
      for (size_t i : it->second) {
        const Node& n = g.nodes[i];
        if (region.count(i) || !candidate_op(n.op) || !n.epilogue.empty() || n.outputs.size() != 1) continue;
        if (g.tensor(n.outputs[0]).shape != g.tensor(x).shape) continue;
        bool inputs_ok = std::all_of(n.inputs.begin(), n.inputs.end(), [&](const std::string& in) {
          return have.count(in) || scalar_const(g, in).has_value();
        });
        if (!inputs_ok || region.size() >= kMaxNodes) continue;
        region.insert(i);
        have.insert(n.outputs[0]);
        changed = true;
      }
    }
  }
  return {region.begin(), region.end()};
}

// The part of `region` that `out` depends on.
std::vector<size_t> ancestors(const Graph& g, const std::vector<size_t>& region, size_t out) {
  std::set<std::string> need{g.nodes[out].outputs[0]};
  std::vector<size_t> keep;
  for (auto it = std::find(region.rbegin(), region.rend(), out); it != region.rend(); ++it) {
    const Node& n = g.nodes[*it];
    if (!need.count(n.outputs[0])) continue;
    keep.push_back(*it);
    for (const auto& in : n.inputs) need.insert(in);
  }
  std::reverse(keep.begin(), keep.end());
  return keep;
}

// Every intermediate of `sub` is read only inside it, and nothing is a graph output.
bool closed(const Graph& g, const std::vector<size_t>& sub, size_t out, const std::map<std::string, std::vector<size_t>>& cons) {
  std::set<size_t> in(sub.begin(), sub.end());
  for (size_t i : sub) {
    if (i == out) continue;
    const std::string& t = g.nodes[i].outputs[0];
    if (std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end()) return false;
    auto it = cons.find(t);
    if (it != cons.end())
      for (size_t c : it->second)
        if (!in.count(c)) return false;
  }
  return true;
}

// One replacement, or false when there is none left.
bool fuse_one(Graph& g) {
  const auto cons = g.consumers();
  std::set<std::string> seen;
  for (const Node& n : g.nodes)
    for (const std::string& x : n.inputs) {
      if (x.empty() || g.is_const(x) || !seen.insert(x).second) continue;
      const std::vector<size_t> region = grow(g, x, cons);
      if (region.size() < 3) continue;
      // Largest sub-region first: the whole GELU rather than a piece of it.
      for (auto it = region.rbegin(); it != region.rend(); ++it) {
        const std::vector<size_t> sub = ancestors(g, region, *it);
        if (sub.size() < 3 || !closed(g, sub, *it, cons)) continue;
        const std::string out = g.nodes[*it].outputs[0];
        const auto form = matches_gelu(g, sub, x, out);
        if (!form) continue;
        Node gelu_node{OpKind::Gelu, g.nodes[*it].name, {x}, {out}, {}, {}};
        if (*form) gelu_node.attrs["approximate"] = std::string("tanh");
        std::set<size_t> drop(sub.begin(), sub.end());
        std::vector<Node> kept;
        for (size_t i = 0; i < g.nodes.size(); ++i) {
          if (i == *it) kept.push_back(gelu_node);
          else if (!drop.count(i)) kept.push_back(std::move(g.nodes[i]));
        }
        for (size_t i : sub)
          if (i != *it) g.tensors.erase(g.nodes[i].outputs[0]);
        g.nodes = std::move(kept);
        return true;
      }
    }
  return false;
}

}  // namespace

void fuse_gelu(Graph& g) {
  while (fuse_one(g)) {
  }
}

}  // namespace trnsim::compiler
