// Concat along an axis: strided copies (lower_movement); tensor-parallel when every input is
// split on the same axis, other than the concatenated one.
#include "trnsim/common/checked.h"
#include "trnsim/compiler/decompose_steps.h"
#include "trnsim/compiler/lower_elementwise.h"
#include "trnsim/compiler/op_unit.h"
#include "trnsim/compiler/tp_rules.h"
#include "trnsim/compiler/unroll_limit.h"

namespace trnsim::compiler {
namespace {

void infer(Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  const auto rank = static_cast<int64_t>(x.size());
  if (rank == 0) throw ShapeError(fmt::format("node '{}': Concat of rank-0 tensors (scalars have no axis to join on)", n.name));
  int64_t a = normalize_axis(n.i("axis", 0), rank, n.name);
  Shape s = x;
  s[a] = 0;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Shape& si = input(g, n, i).shape;
    if (si.size() != x.size()) throw ShapeError(fmt::format("node '{}': Concat of ranks {} and {}", n.name, x.size(), si.size()));
    for (int64_t d = 0; d < rank; ++d)
      if (d != a && si[d] != x[d]) throw ShapeError(fmt::format("node '{}': Concat inputs {} and {} differ off the axis", n.name, shape_str(x), shape_str(si)));
    s[a] = checked_add(s[a], si[a], fmt::format("node '{}': Concat axis size", n.name));
  }
  set_output(g, n, 0, s, input(g, n, 0).type);
}

void eval(Graph& g, const Node& n, std::vector<double>& r) {
  const Shape& os = g.tensor(n.outputs[0]).shape;
  int64_t a = normalize_axis(n.i("axis", 0), static_cast<int64_t>(os.size()), n.name);
  auto ost = row_major_strides(os);
  int64_t at = 0;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const auto& x = data(g, n.inputs[k]);
    const Shape& xs = input(g, n, k).shape;
    for_each_index(xs, {ost}, [&](int64_t i, const std::vector<int64_t>& off) { r[at * ost[a] + off[0]] = x[i]; });
    at += xs[a];
  }
}

// Inputs with no elements add nothing (a partial-rotary model's empty "pass-through" half):
// they are dropped, so no kernel ever sees a zero-sized tensor.
bool drop_empty_inputs(GraphEditor& e, const Node& n) {
  std::vector<std::string> kept;
  for (const auto& t : n.inputs)
    if (numel(e.graph().tensor(t).shape) != 0) kept.push_back(t);
  if (kept.size() == n.inputs.size() || kept.empty()) return false;
  if (kept.size() == 1) {
    decomp::finish(e, n, kept[0]);
    return true;
  }
  e.add(OpKind::Concat, n.name, kept, n.attrs, n.outputs[0]);
  return true;
}

int64_t tp_axis(TpCtx& c) {
  const int64_t ax = normalize_axis(c.n.i("axis", 0), static_cast<int64_t>(c.out_shape().size()), c.n.name);
  int64_t s = -1;
  for (const auto& t : c.n.inputs) {
    const int64_t x = c.sp(t);
    if (x < 0 || (s >= 0 && x != s)) return c.refuse("concatenates split and replicated inputs");
    s = x;
  }
  if (s != ax) return s;
  return c.refuse("concatenates along the split axis");
}

}  // namespace

void register_concat(OpRegistry& r) {
  r.push_back({.kind = OpKind::Concat, .name = "Concat", .cls = OpClass::Movement, .min_inputs = 1, .max_inputs = kMaxUnrolledTaps, .attributes = {"axis"},
               .rules = {.infer = infer, .eval = eval, .decompose = drop_empty_inputs, .lower = lower_movement, .tp_axis = tp_axis}});
}

}  // namespace trnsim::compiler
