// Pad (modes constant, edge, reflect, wrap; pads as an attribute before opset 11, inputs
// after): constant padding with a constant value is a kernel (lower_movement); the other modes
// are Concats of the slices the padding copies, and a value computed at run time a Where.
#include <algorithm>

#include "trnsim/compiler/lower_elementwise.h"
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

void infer(Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  auto p = pad_params(g, n, x);
  Shape s = x;
  for (size_t i = 0; i < x.size(); ++i) s[i] += p.begin[i] + p.end[i];
  set_output(g, n, 0, s, input(g, n, 0).type);
}

void eval(Graph& g, const Node& n, std::vector<double>& r) {
  const Shape& xs = input(g, n, 0).shape;
  const Shape& os = g.tensor(n.outputs[0]).shape;
  const auto rank = static_cast<int64_t>(xs.size());
  auto p = pad_params(g, n, xs);
  const auto& x = data(g, n.inputs[0]);
  if (p.mode != "constant") {  // every output element reads the input element pad_source maps it to
    auto xst = row_major_strides(xs);
    for (size_t i = 0; i < r.size(); ++i) {
      int64_t rem = static_cast<int64_t>(i), off = 0;
      for (int64_t a = rank - 1; a >= 0; --a) {
        const int64_t idx = rem % os[a];
        rem /= os[a];
        off += pad_source(p.mode, idx - p.begin[a], xs[a]) * xst[a];
      }
      r[i] = x[off];
    }
    return;
  }
  std::fill(r.begin(), r.end(), p.value);
  auto ost = row_major_strides(os);
  int64_t base = 0;
  for (int64_t a = 0; a < rank; ++a) base += p.begin[a] * ost[a];
  for_each_index(xs, {ost}, [&](int64_t i, const std::vector<int64_t>& off) { r[base + off[0]] = x[i]; });
}

// Pad in mode edge / reflect / wrap: per padded axis, a Concat of the slices the padding
// copies (runs of consecutive source indices are one slice) around the input. Constant mode
// with a value computed at run time: zero padding, then Where(inside, padded, value).
void pad(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape xs = shape_of(g, n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(xs.size());
  const PadParams p = pad_params(g, n, xs);
  std::vector<int64_t> pads(p.begin);
  pads.insert(pads.end(), p.end.begin(), p.end.end());
  if (p.mode == "constant") {
    std::string z = e.add(OpKind::Pad, n.name, {n.inputs[0], e.ints("pads", pads), e.constant("zero", {}, {0.0}, g.tensor(n.inputs[0]).type)});
    const Shape os = shape_of(g, z);
    std::vector<double> inside(static_cast<size_t>(numel(os)), 1.0);
    for (size_t i = 0; i < inside.size(); ++i) {
      int64_t rem = static_cast<int64_t>(i);
      for (int64_t a = rank - 1; a >= 0; --a) {
        const int64_t k = rem % os[a] - p.begin[a];
        rem /= os[a];
        if (k < 0 || k >= xs[a]) inside[i] = 0;
      }
    }
    std::string mask = e.constant(n.name + ".inside", os, inside, ElemType::Bool);
    finish(e, n, e.add(OpKind::Where, n.name + ".value", {mask, z, n.inputs[2]}));
    return;
  }
  std::string y = n.inputs[0];
  int64_t pieces = 0;
  for (int64_t a = 0; a < rank; ++a) {
    if (p.begin[a] == 0 && p.end[a] == 0) continue;
    std::vector<std::string> parts;
    auto add_run = [&](int64_t from, int64_t to) {  // input indices [from, to) along a
      parts.push_back(e.add(OpKind::Slice, n.name + ".edge", {y, e.ints("s", {from}), e.ints("e", {to}), e.ints("a", {a})}));
    };
    auto runs = [&](int64_t j0, int64_t j1) {  // output positions j0..j1-1 (relative to the input)
      int64_t start = -1, last = -1;
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t src = pad_source(p.mode, j, xs[a]);
        if (start >= 0 && src == last + 1) { last = src; continue; }
        if (start >= 0) add_run(start, last + 1);
        start = last = src;
      }
      if (start >= 0) add_run(start, last + 1);
    };
    runs(-p.begin[a], 0);
    parts.push_back(y);
    runs(xs[a], xs[a] + p.end[a]);
    pieces += static_cast<int64_t>(parts.size());
    if (pieces > 512)
      throw UnsupportedError(fmt::format("unsupported: op Pad (attribute mode = {} with pads that need more than 512 slices) at node '{}'", p.mode, n.name));
    y = e.add(OpKind::Concat, n.name, parts, {{"axis", a}});
  }
  finish(e, n, y);
}

bool decompose(GraphEditor& e, const Node& n) {
  const PadParams p = pad_params(e.graph(), n, shape_of(e.graph(), n.inputs[0]));
  if (p.mode == "constant" && !p.value_at_run_time) return false;
  pad(e, n);
  return true;
}

}  // namespace

void register_pad(OpRegistry& r) {
  r.push_back({.kind = OpKind::Pad, .name = "Pad", .cls = OpClass::Movement, .min_inputs = 1, .max_inputs = 4, .attributes = {"mode", "pads", "value"},
               .rules = {.infer = infer, .eval = eval, .decompose = decompose, .lower = lower_movement}});
}

}  // namespace trnsim::compiler
