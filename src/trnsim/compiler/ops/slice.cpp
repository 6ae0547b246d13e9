// Slice (starts/ends/axes/steps as attributes before opset 10, inputs after): a strided copy
// (lower_movement); negative steps on a tensor computed at run time become a forward Slice
// and Gathers that reverse the axes.
#include <algorithm>
#include <cstdlib>

#include "trnsim/compiler/lower_elementwise.h"
#include "trnsim/compiler/op_unit.h"
#include "trnsim/compiler/shape_inference.h"
#include "trnsim/compiler/tp_rules.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

void infer(Graph& g, const Node& n) {
  Shape s;
  for (const auto& sr : slice_ranges(g, n, input(g, n, 0).shape)) s.push_back(sr.count);
  set_output(g, n, 0, s, input(g, n, 0).type);
}

void eval(Graph& g, const Node& n, std::vector<double>& r) {
  const Shape& xs = input(g, n, 0).shape;
  auto sr = slice_ranges(g, n, xs);
  auto rs = row_major_strides(xs);
  int64_t base = 0;
  std::vector<int64_t> st;
  for (size_t a = 0; a < sr.size(); ++a) {
    base += sr[a].start * rs[a];
    st.push_back(sr[a].step * rs[a]);
  }
  const auto& x = data(g, n.inputs[0]);
  for_each_index(g.tensor(n.outputs[0]).shape, {st}, [&](int64_t i, const std::vector<int64_t>& off) { r[i] = x[base + off[0]]; });
}

// Slice with negative steps on a tensor computed at run time (the DMA kernels walk forward):
// a forward Slice of the same elements (step |s| from the last selected index), then each
// reversed axis is a Gather with constant indices count-1 .. 0 (width-1 slices up to 64, the
// indirect-DMA gather beyond).
void slice_reversed(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape xs = shape_of(g, n.inputs[0]);
  const auto sr = slice_ranges(g, n, xs);
  std::vector<int64_t> st, en, ax, steps, reversed;
  for (size_t a = 0; a < sr.size(); ++a) {
    if (sr[a].count == 0) {  // an empty result: a constant with no elements
      g.tensor(n.outputs[0]).data = std::vector<double>{};
      return;
    }
    const int64_t step = std::abs(sr[a].step);
    const int64_t lo = sr[a].step < 0 ? sr[a].start + (sr[a].count - 1) * sr[a].step : sr[a].start;
    st.push_back(lo);
    en.push_back(lo + (sr[a].count - 1) * step + 1);
    ax.push_back(static_cast<int64_t>(a));
    steps.push_back(step);
    if (sr[a].step < 0 && sr[a].count > 1) reversed.push_back(static_cast<int64_t>(a));
  }
  std::string y = e.add(OpKind::Slice, n.name, {n.inputs[0], e.ints("s", st), e.ints("e", en), e.ints("a", ax), e.ints("st", steps)});
  for (int64_t a : reversed) {
    const int64_t cnt = shape_of(g, y)[a];
    std::vector<int64_t> idx;
    for (int64_t k = cnt - 1; k >= 0; --k) idx.push_back(k);
    Node r;
    r.op = OpKind::Gather;
    r.name = n.name + ".reverse";
    r.inputs = {y, e.ints("reverse", idx)};
    r.attrs = {{"axis", a}};
    r.outputs = {g.fresh(r.name)};
    g.tensors[r.outputs[0]].name = r.outputs[0];
    infer_node(g, r);
    if (cnt <= 64) gather(e, r);
    else if (a != 0) gather_other_axis(e, r);
    else e.add(OpKind::Gather, r.name, r.inputs, r.attrs, r.outputs[0]);
    y = r.outputs[0];
  }
  finish(e, n, y);
}

bool decompose(GraphEditor& e, const Node& n) {
  const auto sr = slice_ranges(e.graph(), n, shape_of(e.graph(), n.inputs[0]));
  if (std::none_of(sr.begin(), sr.end(), [](const SliceRange& r) { return r.step < 0; })) return false;
  slice_reversed(e, n);
  return true;
}

int64_t tp_axis(TpCtx& c) {
  const int64_t s = c.sp(c.n.inputs[0]);
  for (size_t i = 1; i < c.n.inputs.size(); ++i)
    if (!c.n.inputs[i].empty() && !c.g.is_const(c.n.inputs[i])) return c.no_rule();
  const Shape& in = c.g.tensor(c.n.inputs[0]).shape;
  const auto& rs = slice_ranges(c.g, c.n, in)[static_cast<size_t>(s)];
  if (rs.start == 0 && rs.step == 1 && rs.count == in[static_cast<size_t>(s)]) return s;
  return c.refuse("slices the split axis");
}

}  // namespace

void register_slice(OpRegistry& r) {
  r.push_back({.kind = OpKind::Slice, .name = "Slice", .cls = OpClass::Movement, .min_inputs = 1, .max_inputs = 5, .attributes = {"starts", "ends", "axes"},
               .rules = {.infer = infer, .eval = eval, .decompose = decompose, .lower = lower_movement, .tp_axis = tp_axis}});
}

}  // namespace trnsim::compiler
