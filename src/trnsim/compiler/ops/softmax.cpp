// Softmax and LogSoftmax: the fused kernel (lower_softmax) over the last axis; another axis is
// moved last by a Transpose (opset < 13: the input coerced to 2-D at the axis); LogSoftmax is
// Softmax then Log. Softmax splits across cores by 128-row tiles and keeps a tensor-parallel
// split of an axis it does not normalise.
#include "trnsim/compiler/core_split.h"
#include "trnsim/compiler/lower_norm.h"
#include "trnsim/compiler/op_unit.h"
#include "trnsim/compiler/tp_rules.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

void softmax(GraphEditor& e, const Node& n, int opset) {
  const Shape xs = shape_of(e.graph(), n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(xs.size());
  int64_t axis = normalize_axis(n.i("axis", opset < 13 ? 1 : -1), rank, n.name);
  std::string y;
  if (opset < 13) {  // old semantics: the input coerced to 2-D at `axis`
    int64_t rows = 1;
    for (int64_t i = 0; i < axis; ++i) rows *= xs[i];
    std::string x2 = reshape(e, n.name + ".2d", n.inputs[0], {rows, numel(xs) / std::max<int64_t>(rows, 1)});
    y = e.add(OpKind::Softmax, n.name, {x2}, {{"axis", int64_t{-1}}});
    if (n.op == OpKind::LogSoftmax) y = e.add(OpKind::Log, n.name + ".log", {y});
    finish(e, n, y);
    return;
  }
  auto [xt, perm] = axes_last(e, n, n.inputs[0], {axis});
  y = e.add(OpKind::Softmax, n.name, {xt}, {{"axis", int64_t{-1}}});
  if (n.op == OpKind::LogSoftmax) y = e.add(OpKind::Log, n.name + ".log", {y});
  if (xt != n.inputs[0]) {
    std::vector<int64_t> inv(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
    y = transpose(e, n.name + ".back", y, inv);
  }
  finish(e, n, y);
}

bool decompose(GraphEditor& e, const Node& n) {
  const Graph& g = e.graph();
  const int64_t rank = static_cast<int64_t>(shape_of(g, n.inputs[0]).size());
  const int64_t axis = normalize_axis(n.i("axis", g.opset < 13 ? 1 : -1), rank, n.name);
  if (n.op == OpKind::Softmax && axis == rank - 1) return false;
  softmax(e, n, g.opset);
  return true;
}

int64_t tp_axis(TpCtx& c) {
  const int64_t s = c.sp(c.n.inputs[0]);
  const int64_t ax = normalize_axis(c.n.i("axis", c.g.opset >= 13 ? -1 : 1), static_cast<int64_t>(c.out_shape().size()), c.n.name);
  if (s < ax) return s;
  return c.refuse("normalises over the split axis");
}

}  // namespace

void register_softmax(OpRegistry& r) {
  r.push_back({.kind = OpKind::Softmax, .name = "Softmax", .cls = OpClass::Compute, .min_inputs = 1, .max_inputs = 1, .attributes = {"axis"},
               .rules = {.infer = infer_same, .decompose = decompose, .lower = lower_softmax,
                         .parallel_units = [](const Graph& g, const Node& n) { return row_tiles(g.tensor(n.inputs[0]).shape); },
                         .tp_axis = tp_axis}});
  r.push_back({.kind = OpKind::LogSoftmax, .name = "LogSoftmax", .cls = OpClass::Compute, .min_inputs = 1, .max_inputs = 1,
               .attributes = {"axis"}, .rules = {.infer = infer_same, .decompose = decompose}});
}

}  // namespace trnsim::compiler
