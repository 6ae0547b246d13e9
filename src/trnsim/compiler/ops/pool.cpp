// Pooling: MaxPool and AveragePool (count_include_pad, ceil_mode) in 1-D and 2-D as one
// PoolWindow node, a windowed max/sum reduction on VectorE (ops/pool_window.cpp), the average's
// divisor applied after it; other ranks and MaxPool's Indices output as Pad + strided window
// Slices + Max/Add chains. GlobalAveragePool as a ReduceMean over the spatial axes.
#include <cmath>

#include "trnsim/common/checked.h"
#include "trnsim/common/limits.h"
#include "trnsim/compiler/op_unit.h"
#include "trnsim/compiler/unroll_limit.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

// The decomposition takes one strided view per window element: bounded in the shape rule, so
// that a 65,536-wide kernel is refused at once instead of building 65,536 nodes (it hung).
constexpr int64_t kMaxWindowElements = kMaxUnrolledTaps;

// One window covering the whole input, no padding, no dilation (EfficientNet's pooler: a
// 1280-wide kernel, ceil_mode, over a 7x7 map): a global mean or max, not a window to unroll.
bool whole_input_window(const Node& n, const Shape& x, const Shape& kernel) {
  if (kernel.size() + 2 != x.size() || (n.outputs.size() > 1 && !n.outputs[1].empty())) return false;
  const std::string ap = n.s("auto_pad", "NOTSET");
  if (ap != "NOTSET" && ap != "VALID") return false;
  const auto pads = n.ints("pads"), dil = n.ints("dilations"), st = n.ints("strides");
  const bool ceil = n.i("ceil_mode", 0) != 0;
  for (int64_t p : pads) if (p != 0) return false;
  for (int64_t d : dil) if (d != 1) return false;
  for (size_t i = 0; i < kernel.size(); ++i) {
    const int64_t k = kernel[i], in = x[2 + i], stride = i < st.size() ? st[i] : 1;
    // one output position: the window is the input, or ceil_mode's one clipped window
    if (k < in || !(k == in || (ceil && k - in < stride))) return false;
  }
  return true;
}

void infer(Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  const Shape kernel = n.ints("kernel_shape");
  if (x.size() < 3) throw ShapeError(fmt::format("node '{}': {} needs an input of rank >= 3 (N, C, spatial...), got {}", n.name, op_name(n.op), shape_str(x)));
  int64_t elements = 1;
  for (int64_t k : kernel) elements = k > 0 ? checked_mul(elements, k, fmt::format("node '{}': kernel_shape", n.name)) : elements;
  if (elements > kMaxWindowElements && !whole_input_window(n, x, kernel))
    throw UnsupportedError(fmt::format("unsupported: op {} (a window of {} elements; trnsim unrolls at most {}) at node '{}'",
                                       op_name(n.op), elements, kMaxWindowElements, n.name));
  if (whole_input_window(n, x, kernel)) {
    Shape s(x.size(), 1);
    s[0] = x[0], s[1] = x[1];
    set_output(g, n, 0, s, input(g, n, 0).type);
    return;
  }
  set_output(g, n, 0, window_output_shape(n, x, kernel, x.at(1)), input(g, n, 0).type);
  if (has_output(n, 1)) {
    if (n.op != OpKind::MaxPool) throw ShapeError(fmt::format("node '{}': AveragePool has one output", n.name));
    set_output(g, n, 1, g.tensor(n.outputs[0]).shape, ElemType::Int64);
  }
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

// The window max or sum of a 1-D or 2-D pooling as one PoolWindow node (shape of the output).
std::string pool_window(GraphEditor& e, const Node& n, const WindowParams& wp) {
  const Shape xs = shape_of(e.graph(), n.inputs[0]), os = shape_of(e.graph(), n.outputs[0]);
  const bool one_d = xs.size() == 3;
  auto two = [&](const std::vector<int64_t>& v, int64_t one) { return one_d ? std::vector<int64_t>{one, v[0]} : v; };
  const auto k = two(wp.kernel, 1), st = two(wp.strides, 1), dil = two(wp.dilations, 1), pb = two(wp.pad_begin, 0),
             pe = two(wp.pad_end, 0), ex = two(wp.extra_end, 0), out = two(wp.out, 1);
  std::string x = one_d ? reshape(e, n.name + ".as2d", n.inputs[0], {xs[0], xs[1], 1, xs[2]}) : n.inputs[0];
  const bool is_max = n.op == OpKind::MaxPool;
  std::string y = e.add(OpKind::PoolWindow, n.name, {x},
                        {{"mode", int64_t{is_max ? 0 : 1}}, {"kernel_shape", k}, {"strides", st}, {"dilations", dil},
                         {"pads", std::vector<int64_t>{pb[0], pb[1], pe[0] + ex[0], pe[1] + ex[1]}}, {"out_spatial", out},
                         {"pad_value", is_max ? -static_cast<double>(INFINITY) : 0.0}});
  return one_d ? reshape(e, n.name + ".as1d", y, os) : y;
}

bool decompose(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape xs = shape_of(g, n.inputs[0]), os = shape_of(g, n.outputs[0]);
  const size_t sp = xs.size() - 2;
  const Shape kernel = n.ints("kernel_shape");
  const bool is_max = n.op == OpKind::MaxPool;
  const bool indices = is_max && n.outputs.size() > 1 && !n.outputs[1].empty();
  if (whole_input_window(n, xs, kernel)) {
    std::vector<int64_t> axes;
    for (size_t i = 2; i < xs.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    finish(e, n, reduce_over(e, is_max ? OpKind::ReduceMax : OpKind::ReduceMean, n.name + ".global", n.inputs[0], axes, true));
    return true;
  }
  const WindowParams wp = window_params(n, xs, kernel);
  std::string acc;
  if (!indices && sp <= 2) {
    acc = pool_window(e, n, wp);
  } else {
    std::string xp = pad_spatial(e, n, n.inputs[0], wp, is_max ? -INFINITY : 0.0);
    auto w = windows(e, n, xp, kernel, os);
    if (indices) {
      max_pool_with_indices(e, n, wp, w);
      return true;
    }
    acc = w[0];
    for (size_t i = 1; i < w.size(); ++i) acc = e.add(is_max ? OpKind::Max : OpKind::Add, n.name, {acc, w[i]});
  }
  if (!is_max) {
    // The divisor per output position: the taps inside the input (count_include_pad = 0) or
    // inside input + explicit padding (= 1); ceil_mode's extra end padding never counts.
    const bool include_pad = n.i("count_include_pad", 0) != 0;
    // Host memory for the per-axis counts and a divisor per output position, bounded before
    // they are computed (a declared 2^40-wide input took 16 GiB, then bad_alloc; fuzz, onnx).
    double divisor_values = 1, count_values = 0;
    for (int64_t o : wp.out) divisor_values *= static_cast<double>(o), count_values += static_cast<double>(o);
    check_memory(8.0 * (divisor_values + count_values), fmt::format("node '{}': the divisors of {} over {}", n.name,
                                                                    op_name(n.op), shape_str(xs)));
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
  return true;
}

void infer_global(Graph& g, const Node& n) {
  Shape s = input(g, n, 0).shape;
  for (size_t i = 2; i < s.size(); ++i) s[i] = 1;
  set_output(g, n, 0, s, input(g, n, 0).type);
}

bool decompose_global(GraphEditor& e, const Node& n) {
  std::vector<int64_t> axes;
  for (size_t i = 2; i < shape_of(e.graph(), n.inputs[0]).size(); ++i) axes.push_back(static_cast<int64_t>(i));
  Node r = n;
  r.op = OpKind::ReduceMean;
  r.attrs = {{"axes", axes}, {"keepdims", int64_t{1}}};
  reduce(e, r);
  return true;
}

}  // namespace

void register_pool(OpRegistry& r) {
  const OpRules rules{.infer = infer, .decompose = decompose};
  r.push_back({.kind = OpKind::MaxPool, .name = "MaxPool", .cls = OpClass::Compute, .min_inputs = 1, .max_inputs = 1,
               .attributes = {"kernel_shape", "pads", "strides", "auto_pad", "ceil_mode", "dilations", "storage_order"}, .rules = rules});
  r.push_back({.kind = OpKind::AveragePool, .name = "AveragePool", .cls = OpClass::Compute, .min_inputs = 1, .max_inputs = 1,
               .attributes = {"kernel_shape", "pads", "strides", "auto_pad", "ceil_mode", "count_include_pad", "dilations"}, .rules = rules});
  r.push_back({.kind = OpKind::GlobalAveragePool, .name = "GlobalAveragePool", .cls = OpClass::Compute, .min_inputs = 1, .max_inputs = 1,
               .attributes = {}, .rules = {.infer = infer_global, .decompose = decompose_global}});
}

}  // namespace trnsim::compiler
