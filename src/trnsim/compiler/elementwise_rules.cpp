// The rules the element-wise op families share (op_unit.h): broadcasting shape inference,
// host evaluation through the op's scalar function, the core split into (row tile, column
// range) pieces and the tensor-parallel pass-through.
#include <algorithm>

#include "trnsim/compiler/core_split.h"
#include "trnsim/compiler/lower_elementwise.h"
#include "trnsim/compiler/op_unit.h"
#include "trnsim/compiler/shape_util.h"
#include "trnsim/common/checked.h"

namespace trnsim::compiler {

void set_output(Graph& g, const Node& n, size_t o, Shape s, ElemType t) {
  auto& out = g.tensor(n.outputs.at(o));
  out.shape = std::move(s);
  out.type = t;
  out.shape_known = true;
}

void unsupported(const Node& n, const std::string& why) {
  throw UnsupportedError(fmt::format("unsupported: op {} ({}) at node '{}'", op_name(n.op), why, n.name));
}

void infer_broadcast(Graph& g, const Node& n) {
  Shape s = input(g, n, 0).shape;
  for (size_t i = 1; i < n.inputs.size(); ++i) s = broadcast_shapes(s, input(g, n, i).shape, n.name);
  set_output(g, n, 0, s, input(g, n, 0).type);
}

void require_one_type(const Graph& g, const Node& n, size_t first) {
  const ElemType t = input(g, n, first).type;
  // MX dequantisation (the quantize pass) multiplies fp8/fp4 codes by E8M0 scales: one
  // family of narrow floats, decoded exactly on the chip.
  auto same_family = [&](ElemType u) { return u == t || (is_narrow_float(u) && is_narrow_float(t)); };
  for (size_t i = first + 1; i < n.inputs.size(); ++i)
    if (has_input(n, i) && !same_family(input(g, n, i).type))
      throw ShapeError(fmt::format("node '{}' ({}): input {} '{}' is {} but input {} '{}' is {}; the operator takes one "
                                   "element type for these inputs (ONNX type constraint T; insert a Cast)",
                                   n.name, op_name(n.op), i, n.inputs[i], elem_name(input(g, n, i).type), first,
                                   n.inputs[first], elem_name(t)));
}

void infer_binary(Graph& g, const Node& n) {
  require_one_type(g, n, 0);
  infer_broadcast(g, n);
}

void infer_same(Graph& g, const Node& n) { set_output(g, n, 0, input(g, n, 0).shape, input(g, n, 0).type); }

void eval_broadcast(Graph& g, const Node& n, std::vector<double>& r) {
  const Shape& os = g.tensor(n.outputs[0]).shape;
  std::vector<std::vector<int64_t>> st;
  for (size_t i = 0; i < n.inputs.size(); ++i) st.push_back(broadcast_strides(input(g, n, i).shape, os));
  const bool integral = is_integral(input(g, n, 0).type);
  const auto f = op_rules(n.op).binary;
  for_each_index(os, st, [&](int64_t i, const std::vector<int64_t>& off) {
    double v = data(g, n.inputs[0])[off[0]];
    for (size_t k = 1; k < n.inputs.size(); ++k) v = f(v, data(g, n.inputs[k])[off[k]], integral);
    r[i] = v;
  });
}

void eval_map(Graph& g, const Node& n, std::vector<double>& r) {
  const auto& x = data(g, n.inputs[0]);
  const auto f = op_rules(n.op).unary;
  for (size_t i = 0; i < r.size(); ++i) r[i] = f(x[i], n);
}

int64_t elementwise_units(const Graph& g, const Node& n) {
  if (n.outputs.empty()) return 1;
  const Shape& os = g.tensor(n.outputs[0]).shape;
  if (numel(os) < kMinElementwiseElems) return 1;
  // Upper bound of the lowering's pieces (it may merge axes into longer rows).
  const int64_t cols = os.empty() ? 1 : std::max<int64_t>(1, os.back());
  // Ceiling divisions that cannot overflow (a dim of INT64_MAX did in `cols + k - 1`; fuzz).
  const int64_t rows = ceil_div(numel(os) / cols, 128);
  return rows * ceil_div(cols, kMinElementwiseCols);
}

OpRules binary_rules(double (*f)(double, double, bool)) {
  return {.infer = infer_binary, .eval = eval_broadcast, .binary = f, .lower = lower_elementwise,
          .parallel_units = elementwise_units, .tp_axis = tp_elementwise};
}

OpRules unary_rules(double (*f)(double, const Node&)) {
  return {.infer = infer_same, .eval = eval_map, .unary = f, .lower = lower_elementwise,
          .parallel_units = elementwise_units, .tp_axis = tp_elementwise};
}

}  // namespace trnsim::compiler
