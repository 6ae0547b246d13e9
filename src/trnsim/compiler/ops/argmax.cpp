// ArgMax and ArgMin along an axis (keepdims, select_last_index): the extreme by a reduction,
// then the first (or last) position equal to it: Where(x == extreme, position, sentinel)
// reduced by Min (or Max). Exact; indices as int64.
#include <cmath>

#include "trnsim/compiler/op_params.h"
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

int64_t axis_of(const Graph& g, const Node& n) {
  return normalize_axis(n.i("axis", 0), static_cast<int64_t>(input(g, n, 0).shape.size()), n.name);
}

void infer(Graph& g, const Node& n) {
  Shape s = input(g, n, 0).shape;
  const int64_t a = axis_of(g, n);
  if (s[static_cast<size_t>(a)] == 0) unsupported(n, "an empty axis");
  if (keepdims(n)) s[static_cast<size_t>(a)] = 1;
  else s.erase(s.begin() + a);
  set_output(g, n, 0, s, ElemType::Int64);
}

void eval(Graph& g, const Node& n, std::vector<double>& r) {
  const Shape& s = input(g, n, 0).shape;
  const int64_t a = axis_of(g, n), len = s[static_cast<size_t>(a)];
  const int64_t inner = numel(Shape(s.begin() + a + 1, s.end()));
  const bool is_max = n.op == OpKind::ArgMax, last = n.i("select_last_index", 0) != 0;
  const auto& x = data(g, n.inputs[0]);
  for (size_t o = 0; o < r.size(); ++o) {
    const int64_t out = static_cast<int64_t>(o) / inner, in = static_cast<int64_t>(o) % inner;
    int64_t best = 0;
    for (int64_t t = 1; t < len; ++t) {
      const double v = x[static_cast<size_t>((out * len + t) * inner + in)], b = x[static_cast<size_t>((out * len + best) * inner + in)];
      if (is_max ? (v > b || (last && v == b)) : (v < b || (last && v == b))) best = t;
    }
    r[o] = static_cast<double>(best);
  }
}

bool decompose(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape s = shape_of(g, n.inputs[0]);
  const int64_t a = axis_of(g, n), len = s[static_cast<size_t>(a)], rank = static_cast<int64_t>(s.size());
  const bool is_max = n.op == OpKind::ArgMax, last = n.i("select_last_index", 0) != 0;
  std::string ext = reduce_over(e, is_max ? OpKind::ReduceMax : OpKind::ReduceMin, n.name + ".extreme", n.inputs[0], {a}, true);
  std::string hit = e.add(OpKind::Equal, n.name + ".hit", {n.inputs[0], ext});
  std::string pos = iota_along(e, n.name + ".position", len, a, rank, ElemType::Int64);
  std::string none = e.constant(n.name + ".none", {}, {last ? -1.0 : static_cast<double>(len)}, ElemType::Int64);
  std::string cand = e.add(OpKind::Where, n.name + ".candidates", {hit, pos, none});
  finish(e, n, reduce_over(e, last ? OpKind::ReduceMax : OpKind::ReduceMin, n.name, cand, {a}, true));
  return true;
}

OpInfo row(OpKind k, std::string_view name) {
  return {.kind = k, .name = name, .cls = OpClass::Compute, .min_inputs = 1, .max_inputs = 1,
          .attributes = {"axis", "keepdims", "select_last_index"}, .rules = {.infer = infer, .eval = eval, .decompose = decompose}};
}

}  // namespace

void register_argmax(OpRegistry& r) {
  r.push_back(row(OpKind::ArgMax, "ArgMax"));
  r.push_back(row(OpKind::ArgMin, "ArgMin"));
}

}  // namespace trnsim::compiler
