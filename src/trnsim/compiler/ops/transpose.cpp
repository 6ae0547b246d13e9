// Transpose: a strided copy (lower_movement); the split axis of a tensor-parallel region moves
// with the permutation.
#include "trnsim/compiler/lower_elementwise.h"
#include "trnsim/compiler/op_unit.h"
#include "trnsim/compiler/tp_rules.h"

namespace trnsim::compiler {
namespace {

void infer(Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  Shape s;
  for (auto a : transpose_perm(n, static_cast<int64_t>(x.size()))) s.push_back(x[a]);
  set_output(g, n, 0, s, input(g, n, 0).type);
}

void eval(Graph& g, const Node& n, std::vector<double>& r) {
  const Shape& xs = input(g, n, 0).shape;
  auto p = transpose_perm(n, static_cast<int64_t>(xs.size()));
  auto rs = row_major_strides(xs);
  std::vector<int64_t> st;
  for (auto a : p) st.push_back(rs[a]);
  const auto& x = data(g, n.inputs[0]);
  for_each_index(g.tensor(n.outputs[0]).shape, {st}, [&](int64_t i, const std::vector<int64_t>& off) { r[i] = x[off[0]]; });
}

int64_t tp_axis(TpCtx& c) {
  const int64_t s = c.sp(c.n.inputs[0]);
  const auto perm = transpose_perm(c.n, c.rank(c.n.inputs[0]));
  for (size_t b = 0; b < perm.size(); ++b)
    if (perm[b] == s) return static_cast<int64_t>(b);
  return c.no_rule();
}

}  // namespace

void register_transpose(OpRegistry& r) {
  r.push_back({.kind = OpKind::Transpose, .name = "Transpose", .cls = OpClass::Movement, .min_inputs = 1, .max_inputs = 1, .attributes = {"perm"},
               .rules = {.infer = infer, .eval = eval, .lower = lower_movement, .tp_axis = tp_axis}});
}

}  // namespace trnsim::compiler
