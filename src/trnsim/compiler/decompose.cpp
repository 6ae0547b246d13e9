#include "trnsim/compiler/decompose.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "trnsim/common/error.h"
#include "trnsim/compiler/graph_edit.h"
#include "trnsim/compiler/op_params.h"
#include "trnsim/compiler/shape_inference.h"

namespace trnsim::compiler {
namespace {

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

std::string pad_spatial(GraphEditor& e, const Node& n, const std::string& x, size_t sp, double value) {
  auto pads = n.ints("pads", std::vector<int64_t>(2 * sp, 0));
  if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; })) return x;
  std::vector<int64_t> full(2 * (sp + 2), 0);
  for (size_t i = 0; i < sp; ++i) {
    full[2 + i] = pads[i];
    full[(sp + 2) + 2 + i] = pads[sp + i];
  }
  std::string v = e.constant(n.name + ".padvalue", {}, {value});
  return e.add(OpKind::Pad, n.name + ".pad", {x, e.ints("pads", full), v});
}

void conv(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape xs = shape_of(g, n.inputs[0]), ws = shape_of(g, n.inputs[1]), os = shape_of(g, n.outputs[0]);
  const size_t sp = xs.size() - 2;
  const int64_t group = n.i("group", 1), N = xs[0], M = ws[0], Cg = ws[1], Mg = M / group;
  const Shape kernel(ws.begin() + 2, ws.end());
  const int64_t KK = numel(kernel), P = numel(Shape(os.begin() + 2, os.end()));
  std::string xp = pad_spatial(e, n, n.inputs[0], sp, 0.0);
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

void pool(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape xs = shape_of(g, n.inputs[0]), os = shape_of(g, n.outputs[0]);
  const size_t sp = xs.size() - 2;
  const Shape kernel = n.ints("kernel_shape");
  const bool is_max = n.op == OpKind::MaxPool;
  if (n.i("storage_order", 0)) throw UnsupportedError(fmt::format("unsupported: op MaxPool (attribute storage_order=1) at node '{}'", n.name));
  auto pads = n.ints("pads", std::vector<int64_t>(2 * sp, 0));
  bool padded = std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; });
  if (!is_max && padded && !n.i("count_include_pad", 0))
    throw UnsupportedError(fmt::format("unsupported: op AveragePool (attribute count_include_pad=0 with pads) at node '{}'", n.name));
  std::string xp = pad_spatial(e, n, n.inputs[0], sp, is_max ? -INFINITY : 0.0);
  auto w = windows(e, n, xp, kernel, os);
  std::string acc = w[0];
  for (size_t i = 1; i < w.size(); ++i) acc = e.add(is_max ? OpKind::Max : OpKind::Add, n.name, {acc, w[i]});
  if (!is_max) acc = e.add(OpKind::Mul, n.name + ".mean", {acc, e.constant("inv", {}, {1.0 / static_cast<double>(numel(kernel))})});
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
  // (Reshape's 0 means "copy that axis", so an empty [kept, red] view cannot be written.)
  if (kept == 0 || red == 0)
    throw UnsupportedError(fmt::format("unsupported: op {} (zero-size input) at node '{}'", op_name(n.op), n.name));
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

void batchnorm(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  for (size_t i = 1; i < 5; ++i)
    if (!g.is_const(n.inputs[i]))
      throw UnsupportedError(fmt::format("unsupported: op BatchNormalization (input '{}' computed at run time) at node '{}'", n.inputs[i], n.name));
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

}  // namespace

void decompose(Graph& g) {
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
        if (n.inputs.size() == 2) {
          e.nodes().push_back(n);
        } else {  // variadic: a chain of binary ops (one input: a copy)
          std::string y = n.inputs[0];
          for (size_t i = 1; i < n.inputs.size(); ++i) y = e.add(n.op, n.name, {y, n.inputs[i]});
          if (n.inputs.size() == 1) y = e.add(OpKind::Expand, n.name, {y, e.ints("shape", shape_of(g, y))});
          finish(e, n, y);
        }
        break;
      case OpKind::Gather:
        if (g.is_const(n.inputs[1]) && !g.is_const(n.inputs[0]) && numel(shape_of(g, n.inputs[1])) <= 64) gather(e, n);
        else e.nodes().push_back(n);
        break;
      default: e.nodes().push_back(n);
    }
  }
  g.nodes = std::move(e.nodes());
}

}  // namespace trnsim::compiler
