// Expand: numpy broadcasting to a constant shape, a strided copy (lower_movement).
#include "trnsim/compiler/lower_elementwise.h"
#include "trnsim/compiler/op_unit.h"
#include "trnsim/compiler/tp_rules.h"

namespace trnsim::compiler {
namespace {

void eval(Graph& g, const Node& n, std::vector<double>& r) {
  const Shape& os = g.tensor(n.outputs[0]).shape;
  const auto& x = data(g, n.inputs[0]);
  for_each_index(os, {broadcast_strides(input(g, n, 0).shape, os)}, [&](int64_t i, const std::vector<int64_t>& off) { r[i] = x[off[0]]; });
}

int64_t tp_axis(TpCtx& c) {
  const int64_t s = c.sp(c.n.inputs[0]);
  if (has_input(c.n, 1) && !c.g.is_const(c.n.inputs[1])) return c.no_rule();
  c.shape_rewrites.push_back(c.ni);
  return s + static_cast<int64_t>(c.out_shape().size()) - c.rank(c.n.inputs[0]);
}

}  // namespace

void register_expand(OpRegistry& r) {
  r.push_back({.kind = OpKind::Expand, .name = "Expand", .cls = OpClass::Movement, .min_inputs = 2, .max_inputs = 2, .attributes = {},
               .rules = {.infer = [](Graph& g, const Node& n) {
                           set_output(g, n, 0, broadcast_shapes(input(g, n, 0).shape, const_ints(g, n, 1), n.name), input(g, n, 0).type);
                         },
                         .eval = eval, .lower = lower_movement, .tp_axis = tp_axis}});
}

}  // namespace trnsim::compiler
