// Where(condition, x, y): x where the condition holds, else y, with numpy broadcasting.
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

void infer(Graph& g, const Node& n) {
  require_one_type(g, n, 1);  // x and y: one type T (the condition is bool)
  infer_broadcast(g, n);
  g.tensor(n.outputs[0]).type = input(g, n, 1).type;
}

void eval(Graph& g, const Node& n, std::vector<double>& r) {
  const Shape& os = g.tensor(n.outputs[0]).shape;
  std::vector<std::vector<int64_t>> st;
  for (size_t i = 0; i < 3; ++i) st.push_back(broadcast_strides(input(g, n, i).shape, os));
  const auto &c = data(g, n.inputs[0]), &x = data(g, n.inputs[1]), &y = data(g, n.inputs[2]);
  for_each_index(os, st, [&](int64_t i, const std::vector<int64_t>& off) { r[i] = c[off[0]] != 0 ? x[off[1]] : y[off[2]]; });
}

}  // namespace

void register_where(OpRegistry& r) {
  OpInfo i{.kind = OpKind::Where, .name = "Where", .cls = OpClass::Binary, .min_inputs = 3, .max_inputs = 3, .attributes = {},
           .rules = binary_rules(nullptr)};
  i.rules.infer = infer;
  i.rules.eval = eval;
  r.push_back(i);
}

}  // namespace trnsim::compiler
