// TopK(X, K) along an axis (largest, sorted): K rounds of selection on the chip, each the
// extreme (a reduction), its first position (positions equal to it, reduced by Min) and the
// element masked out (Where); values and indices concatenated in order, so the result is
// sorted and ties keep the lower index first, as onnxruntime. K must be constant (at most
// kMaxK rounds).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

constexpr int64_t kMaxK = 256;

int64_t axis_of(const Graph& g, const Node& n) {
  return normalize_axis(n.i("axis", -1), static_cast<int64_t>(input(g, n, 0).shape.size()), n.name);
}

int64_t k_of(const Graph& g, const Node& n) {
  if (n.has("k")) return n.i("k", 0);  // opset < 10
  const auto k = const_ints(g, n, 1);
  if (k.size() != 1) throw ShapeError(fmt::format("node '{}': TopK K must hold one value", n.name));
  return k[0];
}

void infer(Graph& g, const Node& n) {
  Shape s = input(g, n, 0).shape;
  const int64_t a = axis_of(g, n), k = k_of(g, n);
  if (k < 0 || k > s[static_cast<size_t>(a)])
    throw ShapeError(fmt::format("node '{}': TopK K = {} for an axis of {}", n.name, k, s[static_cast<size_t>(a)]));
  s[static_cast<size_t>(a)] = k;
  set_output(g, n, 0, s, input(g, n, 0).type);
  if (has_output(n, 1)) set_output(g, n, 1, s, ElemType::Int64);
}

// Host: a stable sort of each row's positions by value.
void eval(Graph& g, const Node& n, std::vector<double>& r) {
  const Shape& s = input(g, n, 0).shape;
  const int64_t a = axis_of(g, n), k = k_of(g, n), len = s[static_cast<size_t>(a)];
  const int64_t inner = numel(Shape(s.begin() + a + 1, s.end())), outer = len == 0 ? 0 : numel(s) / (len * std::max<int64_t>(1, inner));
  const bool largest = n.i("largest", 1) != 0;
  const auto& x = data(g, n.inputs[0]);
  std::vector<double> idx_out(r.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t t) { return x[static_cast<size_t>((o * len + t) * inner + in)]; };
      std::vector<int64_t> p(static_cast<size_t>(len));
      std::iota(p.begin(), p.end(), 0);
      std::stable_sort(p.begin(), p.end(), [&](int64_t i, int64_t j) { return largest ? at(i) > at(j) : at(i) < at(j); });
      for (int64_t t = 0; t < k; ++t) {
        const size_t out = static_cast<size_t>((o * k + t) * inner + in);
        r[out] = at(p[static_cast<size_t>(t)]);
        idx_out[out] = static_cast<double>(p[static_cast<size_t>(t)]);
      }
    }
  if (has_output(n, 1)) g.tensor(n.outputs[1]).data = std::move(idx_out);
}

bool decompose(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape s = shape_of(g, n.inputs[0]);
  const int64_t a = axis_of(g, n), k = k_of(g, n), len = s[static_cast<size_t>(a)], rank = static_cast<int64_t>(s.size());
  if (k == 0 || numel(s) == 0) {
    for (size_t o = 0; o < n.outputs.size(); ++o)
      if (has_output(n, o)) g.tensor(n.outputs[o]).data = std::vector<double>{};
    return true;
  }
  if (k > kMaxK) unsupported(n, fmt::format("K = {} (at most {} on the chip)", k, kMaxK));
  const bool largest = n.i("largest", 1) != 0;
  std::string pos = iota_along(e, n.name + ".position", len, a, rank, ElemType::Int64);
  std::string none = e.constant(n.name + ".none", {}, {static_cast<double>(len)}, ElemType::Int64);
  // Taken elements become -inf (+inf for the smallest), in x's own type (Where takes one T).
  std::string gone = e.constant(n.name + ".taken", {}, {largest ? -INFINITY : INFINITY}, g.tensor(n.inputs[0]).type);
  std::string cur = n.inputs[0];
  std::vector<std::string> values, indices;
  for (int64_t r = 0; r < k; ++r) {
    std::string ext = reduce_over(e, largest ? OpKind::ReduceMax : OpKind::ReduceMin, n.name + ".extreme", cur, {a}, true);
    std::string hit = e.add(OpKind::Equal, n.name + ".hit", {cur, ext});
    std::string at = reduce_over(e, OpKind::ReduceMin, n.name + ".index", e.add(OpKind::Where, n.name + ".candidates", {hit, pos, none}), {a}, true);
    values.push_back(ext);
    indices.push_back(at);
    if (r + 1 < k) cur = e.add(OpKind::Where, n.name + ".mask", {e.add(OpKind::Equal, n.name + ".taken", {pos, at}), gone, cur});
  }
  auto joined = [&](const std::vector<std::string>& parts, const std::string& tag) {
    return parts.size() == 1 ? parts[0] : e.add(OpKind::Concat, n.name + tag, parts, {{"axis", a}});
  };
  finish(e, n, joined(values, ".values"));
  if (has_output(n, 1))
    e.add(OpKind::Reshape, n.name + ".indices", {joined(indices, ".indices"), e.ints(n.name + ".shape", shape_of(g, n.outputs[1]))}, {}, n.outputs[1]);
  return true;
}

}  // namespace

void register_topk(OpRegistry& r) {
  r.push_back({.kind = OpKind::TopK, .name = "TopK", .cls = OpClass::Compute, .min_inputs = 1, .max_inputs = 2,
               .attributes = {"axis", "k", "largest", "sorted"}, .rules = {.infer = infer, .eval = eval, .decompose = decompose}});
}

}  // namespace trnsim::compiler
