// Split along an axis (sizes as an attribute, an input, or num_outputs equal parts): one Slice
// per output.
#include "trnsim/compiler/lower_elementwise.h"
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

void infer(Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  int64_t a = normalize_axis(n.i("axis", 0), static_cast<int64_t>(x.size()), n.name);
  auto sizes = split_sizes(g, n, x, a);
  for (size_t o = 0; o < n.outputs.size(); ++o) {
    Shape s = x;
    s[a] = sizes[o];
    set_output(g, n, o, s, input(g, n, 0).type);
  }
}

// Each output is a slice along the axis; every output's data is set here (exact copies).
void eval(Graph& g, const Node& n, std::vector<double>& r) {
  const Shape& xs = input(g, n, 0).shape;
  int64_t a = normalize_axis(n.i("axis", 0), static_cast<int64_t>(xs.size()), n.name);
  auto sizes = split_sizes(g, n, xs, a);
  auto xst = row_major_strides(xs);
  const auto& x = data(g, n.inputs[0]);
  int64_t at = 0;
  for (size_t o = 0; o < n.outputs.size(); ++o) {
    auto& t = g.tensor(n.outputs[o]);
    std::vector<double> v(static_cast<size_t>(numel(t.shape)));
    for_each_index(t.shape, {xst}, [&](int64_t i, const std::vector<int64_t>& off) { v[i] = x[at * xst[a] + off[0]]; });
    at += sizes[o];
    if (o == 0) r = std::move(v);
    else t.data = std::move(v);
  }
}

bool decompose(GraphEditor& e, const Node& n) {
  const Shape xs = decomp::shape_of(e.graph(), n.inputs[0]);
  int64_t axis = normalize_axis(n.i("axis", 0), static_cast<int64_t>(xs.size()), n.name);
  auto sizes = split_sizes(e.graph(), n, xs, axis);
  int64_t at = 0;
  for (size_t o = 0; o < n.outputs.size(); ++o) {
    if (!n.outputs[o].empty())
      e.add(OpKind::Slice, n.name, {n.inputs[0], e.ints("s", {at}), e.ints("e", {at + sizes[o]}), e.ints("a", {axis})}, {}, n.outputs[o]);
    at += sizes[o];
  }
  return true;
}

}  // namespace

void register_split(OpRegistry& r) {
  r.push_back({.kind = OpKind::Split, .name = "Split", .cls = OpClass::Movement, .min_inputs = 1, .max_inputs = 2,
               .attributes = {"axis", "split", "num_outputs"},
               .rules = {.infer = infer, .eval = eval, .eval_rounds = true, .decompose = decompose, .lower = lower_movement}});
}

}  // namespace trnsim::compiler
