// The shared steps of the op units' decompositions (decompose_steps.h).
#include "trnsim/compiler/decompose_steps.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "trnsim/common/checked.h"
#include "trnsim/common/error.h"
#include "trnsim/compiler/filled.h"
#include "trnsim/compiler/op_params.h"
#include "trnsim/compiler/shape_inference.h"
#include "trnsim/compiler/unroll_limit.h"

namespace trnsim::compiler::decomp {

const Shape& shape_of(const Graph& g, const std::string& n) { return g.tensor(n).shape; }

// The result of `from` is renamed to `to` (the original node's output) by a final Reshape.
std::string finish(GraphEditor& e, const Node& n, const std::string& from) {
  const std::string& to = n.outputs[0];
  e.add(OpKind::Reshape, n.name, {from, e.ints(n.name + ".shape", shape_of(e.graph(), to))}, {}, to);
  return to;
}

std::string reshape(GraphEditor& e, const std::string& name, const std::string& x, const Shape& s) {
  return e.add(OpKind::Reshape, name, {x, e.ints(name + ".shape", s)});
}

std::string transpose(GraphEditor& e, const std::string& name, const std::string& x, std::vector<int64_t> perm) {
  return e.add(OpKind::Transpose, name, {x}, {{"perm", perm}});
}

// Strided windows of x (already padded) for every kernel offset: Slice on the spatial axes.
std::vector<std::string> windows(GraphEditor& e, const Node& n, const std::string& x, const Shape& kernel,
                                 const Shape& out) {
  const size_t sp = kernel.size();
  auto strides = n.ints("strides", std::vector<int64_t>(sp, 1));
  auto dil = n.ints("dilations", std::vector<int64_t>(sp, 1));
  std::vector<std::string> w;
  std::vector<int64_t> off(sp, 0), axes;
  for (size_t i = 0; i < sp; ++i) axes.push_back(static_cast<int64_t>(2 + i));
  const int64_t total = numel(kernel);
  if (total > kMaxUnrolledTaps)
    throw UnsupportedError(fmt::format("unsupported: op {} (a kernel of {} taps; trnsim unrolls at most {}) at node '{}'",
                                       op_name(n.op), total, kMaxUnrolledTaps, n.name));
  for (int64_t k = 0; k < total; ++k) {
    int64_t r = k;
    for (int i = static_cast<int>(sp) - 1; i >= 0; --i) { off[i] = r % kernel[i]; r /= kernel[i]; }
    std::vector<int64_t> st, en;
    for (size_t i = 0; i < sp; ++i) {
      st.push_back(off[i] * dil[i]);
      en.push_back(off[i] * dil[i] + (out[2 + i] - 1) * strides[i] + 1);
    }
    w.push_back(e.add(OpKind::Slice, n.name + ".window", {x, e.ints("starts", st), e.ints("ends", en), e.ints("axes", axes), e.ints("steps", strides)}));
  }
  return w;
}

// Pads the spatial axes of x as the window parameters say (begin, end + ceil_mode's extra).
std::string pad_spatial(GraphEditor& e, const Node& n, const std::string& x, const WindowParams& wp, double value) {
  const size_t sp = wp.kernel.size();
  std::vector<int64_t> full(2 * (sp + 2), 0);
  bool any = false;
  for (size_t i = 0; i < sp; ++i) {
    full[2 + i] = wp.pad_begin[i];
    full[(sp + 2) + 2 + i] = wp.pad_end[i] + wp.extra_end[i];
    any |= full[2 + i] != 0 || full[(sp + 2) + 2 + i] != 0;
  }
  if (!any) return x;
  std::string v = e.constant(n.name + ".padvalue", {}, {value});
  return e.add(OpKind::Pad, n.name + ".pad", {x, e.ints("pads", full), v});
}

// Moves `axes` (sorted) of x to the end; returns the transposed tensor and the permutation.
std::pair<std::string, std::vector<int64_t>> axes_last(GraphEditor& e, const Node& n, const std::string& x,
                                                       const std::vector<int64_t>& axes) {
  const int64_t rank = static_cast<int64_t>(shape_of(e.graph(), x).size());
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i)
    if (std::find(axes.begin(), axes.end(), i) == axes.end()) perm.push_back(i);
  for (auto a : axes) perm.push_back(a);
  bool identity = true;
  for (int64_t i = 0; i < rank; ++i) identity &= perm[i] == i;
  if (identity) return {x, perm};
  return {transpose(e, n.name + ".axes_last", x, perm), perm};
}

// Reduce over trailing axes only; keepdims restored by the final Reshape.
void reduce(GraphEditor& e, const Node& n) {
  const Shape xs = shape_of(e.graph(), n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(xs.size());
  auto axes = reduce_axes(e.graph(), n, rank);
  if (axes.empty()) { finish(e, n, n.inputs[0]); return; }
  auto [xt, perm] = axes_last(e, n, n.inputs[0], axes);
  Shape s = shape_of(e.graph(), xt);
  int64_t kept = 1, red = 1;
  for (int64_t i = 0; i < rank; ++i) {  // checked: [25, 2^62, 0] overflowed before the 0 (UBSan; fuzz)
    int64_t& p = i < rank - static_cast<int64_t>(axes.size()) ? kept : red;
    p = checked_mul(p, s[i], fmt::format("node '{}': reduced shape {}", n.name, shape_str(s)));
  }
  // An empty input: the result does not depend on it. Reducing an empty set gives the
  // reduction's identity (ONNX 18: 0 for ReduceSum, -inf / +inf for ReduceMax / ReduceMin on
  // floats, NaN = 0/0 for ReduceMean); an empty output has no elements. (Reshape's 0 means
  // "copy that axis", so an empty [kept, red] view cannot be written for the kernel anyway.)
  if (kept == 0 || red == 0) {
    auto& out = e.graph().tensor(n.outputs[0]);
    const bool boolean = out.type == ElemType::Bool, integral = is_integral(out.type) && !boolean;
    if (kept != 0 && integral && n.op != OpKind::ReduceSum)
      throw UnsupportedError(fmt::format("unsupported: op {} (empty reduction of an integer tensor) at node '{}'", op_name(n.op), n.name));
    // (bool: max of nothing is false, min of nothing true)
    const double lo = boolean ? 0.0 : -INFINITY, hi = boolean ? 1.0 : INFINITY;
    const double id = n.op == OpKind::ReduceSum ? 0.0 : n.op == OpKind::ReduceMax ? lo : n.op == OpKind::ReduceMin ? hi : NAN;
    out.data = filled(numel(out.shape), id, fmt::format("node '{}': empty reduction's output {}", n.name, shape_str(out.shape)));
    return;
  }
  std::string x2 = reshape(e, n.name + ".rows", xt, {kept, red});
  std::vector<int64_t> last = {1};
  std::string r = e.add(n.op, n.name, {x2}, {{"axes", last}, {"keepdims", int64_t{0}}});
  finish(e, n, r);
}

void gather(GraphEditor& e, const Node& n) {
  const Shape xs = shape_of(e.graph(), n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(xs.size());
  int64_t axis = normalize_axis(n.i("axis", 0), rank, n.name);
  const auto& idx = *e.graph().tensor(n.inputs[1]).data;
  std::vector<std::string> parts;
  for (double d : idx) {
    int64_t k = static_cast<int64_t>(d);
    if (k < 0) k += xs[axis];
    if (k < 0 || k >= xs[axis]) throw ShapeError(fmt::format("node '{}': gather index {} out of range {}", n.name, d, xs[axis]));
    parts.push_back(e.add(OpKind::Slice, n.name + ".index", {n.inputs[0], e.ints("s", {k}), e.ints("e", {k + 1}), e.ints("a", {axis})}));
  }
  std::string y = parts.size() == 1 ? parts[0] : e.add(OpKind::Concat, n.name, parts, {{"axis", axis}});
  finish(e, n, y);
}

// Gather on axis a != 0 with run-time indices: the kernel gathers rows (axis 0), so the axis
// is moved to the front, gathered, and the index axes moved back to where the axis was.
void gather_other_axis(GraphEditor& e, const Node& n) {
  const Shape xs = shape_of(e.graph(), n.inputs[0]), is = shape_of(e.graph(), n.inputs[1]);
  const int64_t rank = static_cast<int64_t>(xs.size()), q = static_cast<int64_t>(is.size());
  const int64_t a = normalize_axis(n.i("axis", 0), rank, n.name);
  std::vector<int64_t> perm = {a};
  for (int64_t d = 0; d < rank; ++d)
    if (d != a) perm.push_back(d);
  std::string xt = transpose(e, n.name + ".axis_first", n.inputs[0], perm);
  std::string y = e.add(OpKind::Gather, n.name, {xt, n.inputs[1]}, {{"axis", int64_t{0}}});
  // y is [idx..., x[0..a), x(a..rank)]; the output wants [x[0..a), idx..., x(a..rank)].
  std::vector<int64_t> back;
  for (int64_t d = 0; d < a; ++d) back.push_back(q + d);
  for (int64_t d = 0; d < q; ++d) back.push_back(d);
  for (int64_t d = q + a; d < q + rank - 1; ++d) back.push_back(d);
  finish(e, n, transpose(e, n.name + ".axis_back", y, back));
}

// A Reduce* (k) of x over `axes`, in the kernel's form (the trailing-axis reduction of
// `reduce`); returns its output (keepdims as asked).
std::string reduce_over(GraphEditor& e, OpKind k, const std::string& name, const std::string& x, std::vector<int64_t> axes, bool keep) {
  Graph& g = e.graph();
  Node r;
  r.op = k;
  r.name = name;
  r.inputs = {x};
  r.attrs = {{"axes", std::move(axes)}, {"keepdims", int64_t{keep ? 1 : 0}}};
  r.outputs = {g.fresh(name)};
  g.tensors[r.outputs[0]].name = r.outputs[0];
  infer_node(g, r);
  reduce(e, r);
  return r.outputs[0];
}

// 0, 1, .., n-1 along `axis` of a tensor of rank `rank` (1 elsewhere), of type t.
std::string iota_along(GraphEditor& e, const std::string& name, int64_t n, int64_t axis, int64_t rank, ElemType t) {
  Shape s(static_cast<size_t>(rank), 1);
  s[static_cast<size_t>(axis)] = n;
  std::vector<double> v = filled(n, 0.0, fmt::format("the positions '{}' along axis {} ({} elements)", name, axis, n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<double>(i);
  return e.constant(name, s, std::move(v), t);
}

std::string flat_positions(GraphEditor& e, const std::string& name, const std::string& idx, const Shape& sizes) {
  Graph& g = e.graph();
  const ElemType it = g.tensor(idx).type;
  const auto k = static_cast<int64_t>(sizes.size()), q = static_cast<int64_t>(shape_of(g, idx).size());
  std::vector<double> size, stride(static_cast<size_t>(k));
  int64_t st = 1;
  for (int64_t j = k - 1; j >= 0; --j) {
    stride[static_cast<size_t>(j)] = static_cast<double>(st);
    st *= sizes[static_cast<size_t>(j)];
  }
  for (int64_t d : sizes) size.push_back(static_cast<double>(d));
  std::string zero = e.constant(name + ".zero", {}, {0.0}, it);
  std::string neg = e.add(OpKind::Less, name + ".negative", {idx, zero});
  std::string x = e.add(OpKind::Add, name + ".wrapped", {idx, e.add(OpKind::Where, name + ".wrap", {neg, e.constant(name + ".size", {k}, size, it), zero})});
  x = e.add(OpKind::Mul, name + ".stride", {x, e.constant(name + ".strides", {k}, stride, it)});
  return reduce_over(e, OpKind::ReduceSum, name, x, {q - 1}, false);
}

}  // namespace trnsim::compiler::decomp
