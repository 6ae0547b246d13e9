#include "trnsim/compiler/decompose.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "trnsim/common/error.h"
#include "trnsim/compiler/decompose_steps.h"
#include "trnsim/compiler/graph_edit.h"
#include "trnsim/compiler/op_params.h"
#include "trnsim/compiler/shape_inference.h"

namespace trnsim::compiler {
namespace decomp {

using Attrs = std::map<std::string, AttrValue>;

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

void conv(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape xs = shape_of(g, n.inputs[0]), ws = shape_of(g, n.inputs[1]), os = shape_of(g, n.outputs[0]);
  const int64_t group = n.i("group", 1), N = xs[0], M = ws[0], Cg = ws[1], Mg = M / group;
  const Shape kernel(ws.begin() + 2, ws.end());
  const int64_t KK = numel(kernel), P = numel(Shape(os.begin() + 2, os.end()));
  std::string xp = pad_spatial(e, n, n.inputs[0], window_params(n, xs, kernel), 0.0);
  if (group > 1 && Cg == 1 && Mg == 1) {
    // Depthwise (one input and one output channel per group): im2col per group would be one
    // matmul per channel; instead each kernel tap is a per-channel scale of one strided
    // window, y = sum_k w[:, k] * window_k(x), all channels at once.
    Shape ws1 = {M};
    for (size_t i = 2; i < xs.size(); ++i) ws1.push_back(1);
    std::string w2 = reshape(e, n.name + ".weight", n.inputs[1], {M, KK});
    std::string y;
    int64_t k = 0;
    for (const auto& win : windows(e, n, xp, kernel, os)) {
      std::string wk = e.add(OpKind::Slice, n.name + ".tap", {w2, e.ints("s", {k}), e.ints("e", {k + 1}), e.ints("a", {1})});
      std::string t = e.add(OpKind::Mul, n.name + ".tap", {win, reshape(e, n.name + ".tap", wk, ws1)});
      y = y.empty() ? t : e.add(OpKind::Add, n.name + ".taps", {y, t});
      ++k;
    }
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) y = e.add(OpKind::Add, n.name + ".bias", {y, reshape(e, n.name + ".bias", n.inputs[2], ws1)});
    finish(e, n, y);
    return;
  }
  std::vector<std::string> per_group;
  for (int64_t gi = 0; gi < group; ++gi) {
    std::string xg = xp, wg = n.inputs[1];
    if (group > 1) {
      xg = e.add(OpKind::Slice, n.name + ".group", {xp, e.ints("s", {gi * Cg}), e.ints("e", {(gi + 1) * Cg}), e.ints("a", {1})});
      wg = e.add(OpKind::Slice, n.name + ".wgroup", {wg, e.ints("s", {gi * Mg}), e.ints("e", {(gi + 1) * Mg}), e.ints("a", {0})});
    }
    // im2col: [N, Cg, KK, P] from KK strided windows, then [N, Cg*KK, P].
    std::vector<std::string> cols;
    for (const auto& w : windows(e, n, xg, kernel, os)) {
      Shape s = {N, Cg, 1, P};
      cols.push_back(reshape(e, n.name + ".col", w, s));
    }
    std::string col = cols.size() == 1 ? cols[0] : e.add(OpKind::Concat, n.name + ".im2col", cols, {{"axis", int64_t{2}}});
    col = reshape(e, n.name + ".im2col", col, {N, Cg * KK, P});
    std::string w2 = reshape(e, n.name + ".weight", wg, {Mg, Cg * KK});
    per_group.push_back(e.add(OpKind::MatMul, n.name, {w2, col}));   // [N, Mg, P]
  }
  std::string y = per_group.size() == 1 ? per_group[0] : e.add(OpKind::Concat, n.name + ".groups", per_group, {{"axis", int64_t{1}}});
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    std::string b = reshape(e, n.name + ".bias", n.inputs[2], {M, 1});
    y = e.add(OpKind::Add, n.name + ".bias", {y, b});
  }
  finish(e, n, y);
}

// Per output position along one spatial axis, how many of the window's taps fall inside
// [lo, hi) of the unpadded input's coordinates.
std::vector<double> taps_inside(const WindowParams& wp, size_t i, int64_t lo, int64_t hi) {
  std::vector<double> c;
  for (int64_t o = 0; o < wp.out[i]; ++o) {
    int64_t k = 0;
    for (int64_t t = 0; t < wp.kernel[i]; ++t) {
      const int64_t p = o * wp.strides[i] - wp.pad_begin[i] + t * wp.dilations[i];
      k += p >= lo && p < hi;
    }
    c.push_back(static_cast<double>(k));
  }
  return c;
}

// MaxPool's Indices output: the flat index into x (spatial axes row-major, or column-major
// with storage_order = 1) of each window's first maximum, as onnxruntime scans the taps: a tap
// replaces the running maximum only when strictly greater. Per tap the spatial index is a
// constant [1, 1, out...]; the (n, c) offset is added at the end.
void max_pool_with_indices(GraphEditor& e, const Node& n, const WindowParams& wp, const std::vector<std::string>& w) {
  Graph& g = e.graph();
  const Shape xs = shape_of(g, n.inputs[0]);
  const size_t sp = xs.size() - 2;
  if (numel(xs) > (int64_t{1} << 24))
    throw UnsupportedError(fmt::format("unsupported: op MaxPool (output Indices of an input over 2^24 elements: not exact in fp32) at node '{}'", n.name));
  const bool col_major = n.i("storage_order", 0) != 0;
  std::vector<int64_t> sstride(sp, 1);  // element stride of each spatial axis within one (n, c) plane
  for (size_t i = 0; i < sp; ++i)
    for (size_t j = 0; j < sp; ++j)
      if (col_major ? j < i : j > i) sstride[i] *= xs[2 + j];
  Shape ps = {1, 1};
  ps.insert(ps.end(), wp.out.begin(), wp.out.end());
  const int64_t P = numel(ps);
  auto tap_index = [&](int64_t k) {
    std::vector<int64_t> off(sp);
    for (int i = static_cast<int>(sp) - 1; i >= 0; --i) { off[i] = k % wp.kernel[i]; k /= wp.kernel[i]; }
    std::vector<double> v(static_cast<size_t>(P));
    for (int64_t p = 0; p < P; ++p) {
      int64_t r = p, flat = 0;
      for (int i = static_cast<int>(sp) - 1; i >= 0; --i) {
        const int64_t o = r % wp.out[i];
        r /= wp.out[i];
        flat += (o * wp.strides[i] - wp.pad_begin[i] + off[i] * wp.dilations[i]) * sstride[i];
      }
      v[p] = static_cast<double>(flat);
    }
    return e.constant(n.name + ".tap_index", ps, v, ElemType::Int64);
  };
  std::string acc = w[0], idx = tap_index(0);
  for (size_t k = 1; k < w.size(); ++k) {
    std::string better = e.add(OpKind::Greater, n.name + ".better", {w[k], acc});
    acc = e.add(OpKind::Max, n.name, {acc, w[k]});
    idx = e.add(OpKind::Where, n.name + ".argmax", {better, tap_index(static_cast<int64_t>(k)), idx});
  }
  const int64_t plane = numel(Shape(xs.begin() + 2, xs.end()));
  std::vector<double> base(static_cast<size_t>(xs[0] * xs[1]));
  for (size_t i = 0; i < base.size(); ++i) base[i] = static_cast<double>(static_cast<int64_t>(i) * plane);
  Shape bs = {xs[0], xs[1]};
  for (size_t i = 0; i < sp; ++i) bs.push_back(1);
  idx = e.add(OpKind::Add, n.name + ".index", {idx, e.constant(n.name + ".plane", bs, base, ElemType::Int64)});
  finish(e, n, acc);
  e.add(OpKind::Reshape, n.name + ".indices", {idx, e.ints(n.name + ".shape", shape_of(g, n.outputs[1]))}, {}, n.outputs[1]);
}

void pool(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape xs = shape_of(g, n.inputs[0]), os = shape_of(g, n.outputs[0]);
  const size_t sp = xs.size() - 2;
  const Shape kernel = n.ints("kernel_shape");
  const bool is_max = n.op == OpKind::MaxPool;
  const WindowParams wp = window_params(n, xs, kernel);
  std::string xp = pad_spatial(e, n, n.inputs[0], wp, is_max ? -INFINITY : 0.0);
  auto w = windows(e, n, xp, kernel, os);
  if (is_max && n.outputs.size() > 1 && !n.outputs[1].empty()) {
    max_pool_with_indices(e, n, wp, w);
    return;
  }
  std::string acc = w[0];
  for (size_t i = 1; i < w.size(); ++i) acc = e.add(is_max ? OpKind::Max : OpKind::Add, n.name, {acc, w[i]});
  if (!is_max) {
    // The divisor per output position: the taps inside the input (count_include_pad = 0) or
    // inside input + explicit padding (= 1); ceil_mode's extra end padding never counts.
    const bool include_pad = n.i("count_include_pad", 0) != 0;
    std::vector<std::vector<double>> per_axis;
    bool uniform = true;
    for (size_t i = 0; i < sp; ++i) {
      const int64_t lo = include_pad ? -wp.pad_begin[i] : 0, hi = xs[2 + i] + (include_pad ? wp.pad_end[i] : 0);
      per_axis.push_back(taps_inside(wp, i, lo, hi));
      for (double c : per_axis.back()) uniform &= c == static_cast<double>(wp.kernel[i]);
    }
    if (uniform) {
      acc = e.add(OpKind::Mul, n.name + ".mean", {acc, e.constant("inv", {}, {1.0 / static_cast<double>(numel(kernel))})});
    } else {
      Shape cs = {1, 1};
      cs.insert(cs.end(), wp.out.begin(), wp.out.end());
      std::vector<double> inv(static_cast<size_t>(numel(cs)), 1.0);
      for (size_t k = 0; k < inv.size(); ++k) {
        int64_t r = static_cast<int64_t>(k);
        double cnt = 1;
        for (int i = static_cast<int>(sp) - 1; i >= 0; --i) {
          cnt *= per_axis[i][r % wp.out[i]];
          r /= wp.out[i];
        }
        inv[k] = cnt > 0 ? 1.0 / cnt : NAN;  // a window over padding only: 0/0 as the reference
      }
      acc = e.add(OpKind::Mul, n.name + ".mean", {acc, e.constant("inv_count", cs, inv)});
    }
  }
  finish(e, n, acc);
}

void gemm(GraphEditor& e, const Node& n) {
  std::string a = n.inputs[0], b = n.inputs[1];
  if (n.i("transA", 0)) a = transpose(e, n.name + ".transA", a, {1, 0});
  if (n.i("transB", 0)) b = transpose(e, n.name + ".transB", b, {1, 0});
  std::string y = e.add(OpKind::MatMul, n.name, {a, b});
  double alpha = n.f("alpha", 1.0), beta = n.f("beta", 1.0);
  if (alpha != 1.0) y = e.add(OpKind::Mul, n.name + ".alpha", {y, e.constant("alpha", {}, {alpha})});
  if (n.inputs.size() > 2 && !n.inputs[2].empty() && beta != 0.0) {
    std::string c = n.inputs[2];
    if (beta != 1.0) c = e.add(OpKind::Mul, n.name + ".beta", {c, e.constant("beta", {}, {beta})});
    y = e.add(OpKind::Add, n.name + ".bias", {y, c});
  }
  finish(e, n, y);
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
  for (int64_t i = 0; i < rank; ++i) (i < rank - static_cast<int64_t>(axes.size()) ? kept : red) *= s[i];
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
    out.data = std::vector<double>(static_cast<size_t>(numel(out.shape)), id);
    return;
  }
  std::string x2 = reshape(e, n.name + ".rows", xt, {kept, red});
  std::vector<int64_t> last = {1};
  std::string r = e.add(n.op, n.name, {x2}, {{"axes", last}, {"keepdims", int64_t{0}}});
  finish(e, n, r);
}

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

void layernorm(GraphEditor& e, const Node& n) {
  const Shape xs = shape_of(e.graph(), n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(xs.size());
  int64_t axis = normalize_axis(n.i("axis", -1), rank, n.name);
  int64_t rows = 1;
  for (int64_t i = 0; i < axis; ++i) rows *= xs[i];
  int64_t cols = numel(xs) / std::max<int64_t>(rows, 1);
  auto param = [&](size_t i, double fill) {
    if (i < n.inputs.size() && !n.inputs[i].empty()) {
      std::string p = n.inputs[i];
      Shape ps = shape_of(e.graph(), p);
      if (numel(ps) == cols) return reshape(e, n.name + ".param", p, {cols});
      return reshape(e, n.name + ".param", e.add(OpKind::Expand, n.name + ".param", {p, e.ints("shape", Shape(xs.begin() + axis, xs.end()))}), {cols});
    }
    return e.constant(n.name + ".param", {cols}, std::vector<double>(cols, fill));
  };
  std::string x2 = reshape(e, n.name + ".2d", n.inputs[0], {rows, cols});
  std::string y = e.add(OpKind::LayerNormalization, n.name, {x2, param(1, 1.0), param(2, 0.0)},
                        {{"axis", int64_t{-1}}, {"epsilon", n.f("epsilon", 1e-5)}});
  finish(e, n, y);
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

// Parameters computed at run time: (x - mean) * (scale / sqrt(var + eps)) + bias, each
// per-channel vector reshaped to [C, 1, ...] to broadcast over the spatial axes.
void batchnorm_runtime(GraphEditor& e, const Node& n) {
  const Shape xs = shape_of(e.graph(), n.inputs[0]);
  if (xs.size() < 2) throw ShapeError(fmt::format("node '{}': BatchNormalization needs an input of rank >= 2", n.name));
  Shape ps = {xs[1]};
  for (size_t i = 2; i < xs.size(); ++i) ps.push_back(1);
  auto param = [&](size_t i) { return reshape(e, n.name + ".param", n.inputs[i], ps); };
  std::string d = e.add(OpKind::Add, n.name + ".eps", {param(4), e.constant("eps", {}, {n.f("epsilon", 1e-5)})});
  d = e.add(OpKind::Div, n.name + ".scale", {param(1), e.add(OpKind::Sqrt, n.name + ".std", {d})});
  std::string y = e.add(OpKind::Sub, n.name + ".center", {n.inputs[0], param(3)});
  y = e.add(OpKind::Mul, n.name + ".norm", {y, d});
  finish(e, n, e.add(OpKind::Add, n.name + ".shift", {y, param(2)}));
}

void batchnorm(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  for (size_t i = 1; i < 5; ++i)
    if (!g.is_const(n.inputs[i])) {
      batchnorm_runtime(e, n);
      return;
    }
  const auto &sc = *g.tensor(n.inputs[1]).data, &b = *g.tensor(n.inputs[2]).data, &m = *g.tensor(n.inputs[3]).data, &v = *g.tensor(n.inputs[4]).data;
  double eps = n.f("epsilon", 1e-5);
  const Shape xs = shape_of(g, n.inputs[0]);
  Shape ps = {static_cast<int64_t>(sc.size())};
  for (size_t i = 2; i < xs.size(); ++i) ps.push_back(1);
  std::vector<double> scale(sc.size()), shift(sc.size());
  for (size_t c = 0; c < sc.size(); ++c) {
    scale[c] = sc[c] / std::sqrt(v[c] + eps);
    shift[c] = b[c] - m[c] * scale[c];
  }
  std::string y = e.add(OpKind::Mul, n.name + ".scale", {n.inputs[0], e.constant("bn_scale", ps, scale)});
  y = e.add(OpKind::Add, n.name + ".shift", {y, e.constant("bn_shift", ps, shift)});
  finish(e, n, y);
}

void split(GraphEditor& e, const Node& n) {
  const Shape xs = shape_of(e.graph(), n.inputs[0]);
  int64_t axis = normalize_axis(n.i("axis", 0), static_cast<int64_t>(xs.size()), n.name);
  auto sizes = split_sizes(e.graph(), n, xs, axis);
  int64_t at = 0;
  for (size_t o = 0; o < n.outputs.size(); ++o) {
    if (!n.outputs[o].empty())
      e.add(OpKind::Slice, n.name, {n.inputs[0], e.ints("s", {at}), e.ints("e", {at + sizes[o]}), e.ints("a", {axis})}, {}, n.outputs[o]);
    at += sizes[o];
  }
}

void clip(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  // Bounds computed at run time are element-wise Max/Min with a broadcast scalar.
  auto bound = [&](size_t i) { return i < n.inputs.size() && !n.inputs[i].empty() && !g.is_const(n.inputs[i]); };
  std::string y = n.inputs[0];
  if (bound(1) || bound(2)) {
    if (n.inputs.size() > 1 && !n.inputs[1].empty()) y = e.add(OpKind::Max, n.name + ".min", {y, n.inputs[1]});
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) y = e.add(OpKind::Min, n.name + ".max", {y, n.inputs[2]});
    finish(e, n, y);
    return;
  }
  double lo = n.has("min") ? n.f("min", 0) : const_scalar(g, n, 1, -INFINITY);
  double hi = n.has("max") ? n.f("max", 0) : const_scalar(g, n, 2, INFINITY);
  if (std::isfinite(lo)) y = e.add(OpKind::Max, n.name + ".min", {y, e.constant("lo", {}, {lo})});
  if (std::isfinite(hi)) y = e.add(OpKind::Min, n.name + ".max", {y, e.constant("hi", {}, {hi})});
  finish(e, n, y);
}

}  // namespace decomp

void decompose(Graph& g) {
  using namespace decomp;
  GraphEditor e(g);
  std::vector<Node> old = std::move(g.nodes);
  g.nodes.clear();
  for (auto& n : old) {
    switch (n.op) {
      case OpKind::Gemm: gemm(e, n); break;
      case OpKind::Conv: conv(e, n); break;
      case OpKind::MaxPool:
      case OpKind::AveragePool: pool(e, n); break;
      case OpKind::GlobalAveragePool: {
        std::vector<int64_t> axes;
        for (size_t i = 2; i < shape_of(g, n.inputs[0]).size(); ++i) axes.push_back(static_cast<int64_t>(i));
        Node r = n;
        r.op = OpKind::ReduceMean;
        r.attrs = {{"axes", axes}, {"keepdims", int64_t{1}}};
        reduce(e, r);
        break;
      }
      case OpKind::BatchNormalization: batchnorm(e, n); break;
      case OpKind::Flatten:
      case OpKind::Squeeze:
      case OpKind::Unsqueeze:
      case OpKind::Identity: finish(e, n, n.inputs[0]); break;
      case OpKind::Split: split(e, n); break;
      case OpKind::Softmax:
      case OpKind::LogSoftmax: {
        const int64_t rank = static_cast<int64_t>(shape_of(g, n.inputs[0]).size());
        int64_t axis = normalize_axis(n.i("axis", g.opset < 13 ? 1 : -1), rank, n.name);
        if (n.op == OpKind::Softmax && axis == rank - 1) e.nodes().push_back(n);
        else softmax(e, n, g.opset);
        break;
      }
      case OpKind::ReduceMean:
      case OpKind::ReduceSum:
      case OpKind::ReduceMax:
      case OpKind::ReduceMin: {
        const int64_t rank = static_cast<int64_t>(shape_of(g, n.inputs[0]).size());
        auto axes = reduce_axes(g, n, rank);
        if (rank == 2 && axes == std::vector<int64_t>{1} && !keepdims(n) && n.inputs.size() == 1) e.nodes().push_back(n);
        else reduce(e, n);
        break;
      }
      case OpKind::LayerNormalization: {
        if ((n.outputs.size() > 1 && !n.outputs[1].empty()) || (n.outputs.size() > 2 && !n.outputs[2].empty())) {
          layernorm_with_stats(e, n);
          break;
        }
        bool plain = shape_of(g, n.inputs[0]).size() == 2 && normalize_axis(n.i("axis", -1), 2, n.name) == 1 &&
                     n.inputs.size() == 3 && !n.inputs[2].empty() && shape_of(g, n.inputs[1]).size() == 1 &&
                     shape_of(g, n.inputs[2]).size() == 1;
        if (plain) e.nodes().push_back(n);
        else layernorm(e, n);
        break;
      }
      case OpKind::Clip: clip(e, n); break;
      case OpKind::Max:
      case OpKind::Min:
        if (n.inputs.size() == 2) e.nodes().push_back(n);
        else variadic(e, n);
        break;
      case OpKind::Sum:
      case OpKind::Mean: variadic(e, n); break;
      case OpKind::Dropout: dropout(e, n); break;
      case OpKind::Elu:
      case OpKind::Selu:
      case OpKind::Celu:
      case OpKind::ThresholdedRelu:
      case OpKind::Softsign:
      case OpKind::Shrink:
      case OpKind::PRelu: activation(e, n); break;
      case OpKind::Tile: tile(e, n); break;
      case OpKind::Resize: resize(e, n); break;
      case OpKind::Slice: {
        const auto sr = slice_ranges(g, n, shape_of(g, n.inputs[0]));
        if (std::any_of(sr.begin(), sr.end(), [](const SliceRange& r) { return r.step < 0; })) slice_reversed(e, n);
        else e.nodes().push_back(n);
        break;
      }
      case OpKind::Pad: {
        const PadParams p = pad_params(g, n, shape_of(g, n.inputs[0]));
        if (p.mode != "constant" || p.value_at_run_time) pad(e, n);
        else e.nodes().push_back(n);
        break;
      }
      case OpKind::LRN: lrn(e, n); break;
      case OpKind::GatherElements: gather_elements(e, n); break;
      case OpKind::Gather:
        if (g.is_const(n.inputs[1]) && !g.is_const(n.inputs[0]) && numel(shape_of(g, n.inputs[1])) <= 64) gather(e, n);
        else if (normalize_axis(n.i("axis", 0), static_cast<int64_t>(shape_of(g, n.inputs[0]).size()), n.name) != 0) gather_other_axis(e, n);
        else e.nodes().push_back(n);
        break;
      default: e.nodes().push_back(n);
    }
  }
  g.nodes = std::move(e.nodes());
}

}  // namespace trnsim::compiler
