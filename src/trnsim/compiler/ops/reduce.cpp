// ReduceSum, ReduceMean, ReduceMax, ReduceMin: the reduction kernel (lower_reduce) over the
// last axis of a [rows, cols] view; other axes are moved last and merged by the shared
// decomposition step (decomp::reduce), keepdims restored by a Reshape. ReduceL1, ReduceL2 and
// ReduceSumSquare (weight norm in exported Wav2Vec2) are a ReduceSum of |x| or x*x (then Sqrt).
#include <algorithm>
#include <cmath>

#include "trnsim/compiler/lower_norm.h"
#include "trnsim/compiler/op_unit.h"
#include "trnsim/compiler/tp_rules.h"

namespace trnsim::compiler {
namespace {

using K = OpKind;

void infer(Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  const auto rank = static_cast<int64_t>(x.size());
  auto axes = reduce_axes(g, n, rank);
  Shape s;
  for (int64_t i = 0; i < rank; ++i) {
    bool red = std::find(axes.begin(), axes.end(), i) != axes.end();
    if (!red) s.push_back(x[i]);
    else if (keepdims(n)) s.push_back(1);
  }
  set_output(g, n, 0, s, input(g, n, 0).type);
}

void eval(Graph& g, const Node& n, std::vector<double>& r) {
  const Shape& xs = input(g, n, 0).shape;
  auto axes = reduce_axes(g, n, static_cast<int64_t>(xs.size()));
  // Output strides seen from the input index space: 0 along reduced axes.
  Shape kept = xs;
  for (auto a : axes) kept[a] = 1;
  auto ost = broadcast_strides(kept, xs);
  const bool is_max = n.op == K::ReduceMax, is_min = n.op == K::ReduceMin;
  std::fill(r.begin(), r.end(), is_max ? -INFINITY : is_min ? INFINITY : 0);
  const auto& x = data(g, n.inputs[0]);
  const bool l1 = n.op == K::ReduceL1, square = n.op == K::ReduceL2 || n.op == K::ReduceSumSquare;
  for_each_index(xs, {ost}, [&](int64_t i, const std::vector<int64_t>& off) {
    double& d = r[off[0]];
    const double v = l1 ? std::fabs(x[i]) : square ? x[i] * x[i] : x[i];
    d = is_max ? std::max(d, v) : is_min ? std::min(d, v) : d + v;
  });
  if (n.op == K::ReduceL2)
    for (auto& v : r) v = std::sqrt(v);
  if (n.op == K::ReduceMean && !r.empty()) {
    double cnt = static_cast<double>(numel(xs)) / static_cast<double>(r.size());
    for (auto& v : r) v /= cnt;
  }
}

bool decompose(GraphEditor& e, const Node& n) {
  const Graph& g = e.graph();
  const int64_t rank = static_cast<int64_t>(decomp::shape_of(g, n.inputs[0]).size());
  auto axes = reduce_axes(g, n, rank);
  if (rank == 2 && axes == std::vector<int64_t>{1} && !keepdims(n) && n.inputs.size() == 1) return false;
  decomp::reduce(e, n);
  return true;
}

// ReduceL1 / ReduceL2 / ReduceSumSquare: the element-wise map, a ReduceSum, then Sqrt for L2.
bool decompose_norm(GraphEditor& e, const Node& n) {
  const Graph& g = e.graph();
  const int64_t rank = static_cast<int64_t>(decomp::shape_of(g, n.inputs[0]).size());
  const std::string& x = n.inputs[0];
  const std::string m = n.op == K::ReduceL1 ? e.add(K::Abs, n.name + ".abs", {x}) : e.add(K::Mul, n.name + ".square", {x, x});
  std::string r = decomp::reduce_over(e, K::ReduceSum, n.name + ".sum", m, reduce_axes(g, n, rank), keepdims(n));
  if (n.op == K::ReduceL2) r = e.add(K::Sqrt, n.name + ".sqrt", {r});
  decomp::finish(e, n, r);
  return true;
}

int64_t tp_axis(TpCtx& c) {
  const int64_t s = c.sp(c.n.inputs[0]);
  const auto axes = reduce_axes(c.g, c.n, c.rank(c.n.inputs[0]));
  if (std::count(axes.begin(), axes.end(), s)) return c.refuse("reduces over the split axis");
  if (keepdims(c.n)) return s;
  return s - std::count_if(axes.begin(), axes.end(), [&](int64_t x) { return x < s; });
}

OpInfo row(OpKind k, std::string_view name) {
  return {.kind = k, .name = name, .cls = OpClass::Compute, .min_inputs = 1, .max_inputs = 2,
          .attributes = {"axes", "keepdims", "noop_with_empty_axes"},
          .rules = {.infer = infer, .eval = eval, .decompose = decompose, .lower = lower_reduce, .tp_axis = tp_axis}};
}

}  // namespace

void register_reduce(OpRegistry& r) {
  r.push_back(row(K::ReduceMean, "ReduceMean"));
  r.push_back(row(K::ReduceSum, "ReduceSum"));
  r.push_back(row(K::ReduceMax, "ReduceMax"));
  r.push_back(row(K::ReduceMin, "ReduceMin"));
  for (auto [k, name] : {std::pair{K::ReduceL1, "ReduceL1"}, std::pair{K::ReduceL2, "ReduceL2"},
                         std::pair{K::ReduceSumSquare, "ReduceSumSquare"}}) {
    OpInfo i = row(k, name);
    i.rules.decompose = decompose_norm;
    r.push_back(i);
  }
}

}  // namespace trnsim::compiler
