// Decompositions of the ops added for models nobody tuned for (issue 4): n-ary Sum/Mean,
// inference Dropout, LRN, LayerNormalization with its statistics, run-time GatherElements, Pad
// modes and run-time pad values, run-time Slice with negative steps, activations built from
// element-wise ops, Tile. Each rewrites one node into existing ops (decompose_steps.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "trnsim/common/error.h"
#include "trnsim/compiler/decompose_steps.h"
#include "trnsim/compiler/op_params.h"
#include "trnsim/compiler/resize_params.h"
#include "trnsim/compiler/shape_inference.h"

namespace trnsim::compiler::decomp {

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

// Sum / Mean / Max / Min of n inputs: a chain of binary ops with numpy broadcasting (Mean:
// the sum times 1/n); one input is a copy.
void variadic(GraphEditor& e, const Node& n) {
  const OpKind bin = n.op == OpKind::Sum || n.op == OpKind::Mean ? OpKind::Add : n.op;
  std::string y = n.inputs[0];
  for (size_t i = 1; i < n.inputs.size(); ++i) y = e.add(bin, n.name, {y, n.inputs[i]});
  if (n.op == OpKind::Mean && n.inputs.size() > 1)
    y = e.add(OpKind::Mul, n.name + ".mean", {y, e.constant("inv_n", {}, {1.0 / static_cast<double>(n.inputs.size())})});
  if (n.inputs.size() == 1) y = e.add(OpKind::Expand, n.name, {y, e.ints("shape", shape_of(e.graph(), y))});
  finish(e, n, y);
}

// Inference: output = input; the mask (if asked for) is a constant all-true tensor.
void dropout(GraphEditor& e, const Node& n) {
  if (n.outputs.size() > 1 && !n.outputs[1].empty()) {
    auto& mask = e.graph().tensor(n.outputs[1]);
    mask.data = std::vector<double>(static_cast<size_t>(numel(mask.shape)), 1.0);
  }
  finish(e, n, n.inputs[0]);
}

// LRN (cross-channel): y = x / (bias + alpha / size * sum of x^2 over the channel window
// [c - floor((size-1)/2), c + ceil((size-1)/2)])^beta. The window sum is `size` channel slices
// of the squared input, zero-padded along C, added up; the rest is element-wise.
void lrn(GraphEditor& e, const Node& n) {
  const Shape xs = shape_of(e.graph(), n.inputs[0]);
  const int64_t size = n.i("size", 0), C = xs[1];
  const double alpha = n.f("alpha", 1e-4), beta = n.f("beta", 0.75), bias = n.f("bias", 1.0);
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  std::string sq = e.add(OpKind::Mul, n.name + ".square", {n.inputs[0], n.inputs[0]});
  std::vector<int64_t> pads(2 * xs.size(), 0);
  pads[1] = before;
  pads[xs.size() + 1] = after;
  std::string padded = size > 1 ? e.add(OpKind::Pad, n.name + ".pad", {sq, e.ints("pads", pads), e.constant("zero", {}, {0.0})}) : sq;
  std::string acc;
  for (int64_t k = 0; k < size; ++k) {
    std::string w = size > 1 ? e.add(OpKind::Slice, n.name + ".window", {padded, e.ints("s", {k}), e.ints("e", {k + C}), e.ints("a", {1})}) : padded;
    acc = acc.empty() ? w : e.add(OpKind::Add, n.name + ".sum", {acc, w});
  }
  std::string d = e.add(OpKind::Mul, n.name + ".scale", {acc, e.constant("alpha", {}, {alpha / static_cast<double>(size)})});
  d = e.add(OpKind::Add, n.name + ".bias", {d, e.constant("bias", {}, {bias})});
  d = e.add(OpKind::Pow, n.name + ".pow", {d, e.constant("beta", {}, {beta})});
  finish(e, n, e.add(OpKind::Div, n.name, {n.inputs[0], d}));
}

// LayerNormalization with its Mean / InvStdDev outputs: built from reductions and element-wise
// ops (the fused kernel does not return its statistics). Statistics are over axes [axis, rank).
void layernorm_with_stats(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape xs = shape_of(g, n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(xs.size());
  const int64_t axis = normalize_axis(n.i("axis", -1), rank, n.name);
  std::vector<int64_t> axes;
  for (int64_t i = axis; i < rank; ++i) axes.push_back(i);
  const Shape stat = shape_of(g, n.outputs.size() > 1 && !n.outputs[1].empty() ? n.outputs[1] : n.outputs[2]);
  auto reduce_mean = [&](const std::string& x, const std::string& tag) {
    Node r;
    r.op = OpKind::ReduceMean;
    r.name = n.name + tag;
    r.inputs = {x};
    r.attrs = {{"axes", axes}, {"keepdims", int64_t{1}}};
    r.outputs = {g.fresh(r.name)};
    g.tensors[r.outputs[0]].name = r.outputs[0];
    infer_node(g, r);
    reduce(e, r);
    return r.outputs[0];
  };
  std::string mean = reduce_mean(n.inputs[0], ".mean");
  std::string d = e.add(OpKind::Sub, n.name + ".center", {n.inputs[0], mean});
  std::string var = reduce_mean(e.add(OpKind::Mul, n.name + ".square", {d, d}), ".var");
  std::string inv = e.add(OpKind::Add, n.name + ".eps", {var, e.constant("eps", {}, {n.f("epsilon", 1e-5)})});
  inv = e.add(OpKind::Reciprocal, n.name + ".rstd", {e.add(OpKind::Sqrt, n.name + ".std", {inv})});
  std::string y = e.add(OpKind::Mul, n.name + ".norm", {d, inv});
  y = e.add(OpKind::Mul, n.name + ".gamma", {y, n.inputs[1]});
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) y = e.add(OpKind::Add, n.name + ".beta", {y, n.inputs[2]});
  finish(e, n, y);
  if (n.outputs.size() > 1 && !n.outputs[1].empty())
    e.add(OpKind::Reshape, n.name + ".mean_out", {mean, e.ints(n.name + ".shape", stat)}, {}, n.outputs[1]);
  if (n.outputs.size() > 2 && !n.outputs[2].empty())
    e.add(OpKind::Reshape, n.name + ".rstd_out", {inv, e.ints(n.name + ".shape", stat)}, {}, n.outputs[2]);
}

// GatherElements with indices computed at run time: out[.., j, ..] = data[.., idx[.., j, ..], ..]
// (j on `axis`) as an exact one-hot selection: the indices are compared with 0..D-1 along a new
// trailing axis, Where picks the data element (no multiply, so inf/NaN elsewhere stay out) and
// a ReduceSum over that axis adds the one survivor to zeros.
void gather_elements(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape xs = shape_of(g, n.inputs[0]), is = shape_of(g, n.inputs[1]);
  const int64_t rank = static_cast<int64_t>(xs.size());
  const int64_t axis = normalize_axis(n.i("axis", 0), rank, n.name);
  const int64_t D = xs[axis];
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && is[d] > xs[d])
      throw ShapeError(fmt::format("node '{}': GatherElements indices {} exceed data {} on axis {}", n.name, shape_str(is), shape_str(xs), d));
  constexpr int64_t kMaxOneHot = int64_t{1} << 26;
  if (numel(is) * D > kMaxOneHot)
    throw UnsupportedError(fmt::format("unsupported: op GatherElements (run-time indices {} over an axis of {}: one-hot of more than 2^26 elements) at node '{}'",
                                       shape_str(is), D, n.name));
  if (numel(is) == 0 || D == 0)
    throw UnsupportedError(fmt::format("unsupported: op GatherElements (zero-size input) at node '{}'", n.name));
  // Negative indices count from the end: idx + D * (idx < 0).
  std::string idx = n.inputs[1];
  std::string neg = e.add(OpKind::Less, n.name + ".negative", {idx, e.constant("zero", {}, {0.0}, g.tensor(idx).type)});
  std::string shift = e.add(OpKind::Where, n.name + ".wrap", {neg, e.constant("D", {}, {static_cast<double>(D)}, g.tensor(idx).type),
                                                               e.constant("zero", {}, {0.0}, g.tensor(idx).type)});
  idx = e.add(OpKind::Add, n.name + ".index", {idx, shift});
  Shape ie = is;
  ie.push_back(1);
  std::string idx1 = reshape(e, n.name + ".index", idx, ie);
  std::vector<double> iota(static_cast<size_t>(D));
  for (int64_t k = 0; k < D; ++k) iota[k] = static_cast<double>(k);
  std::string onehot = e.add(OpKind::Equal, n.name + ".onehot", {idx1, e.constant("iota", {D}, iota, g.tensor(idx).type)});
  // data restricted to the indices' extent off the axis, the axis moved last, a 1 in its place.
  std::string x = n.inputs[0];
  std::vector<int64_t> st, en, ax;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && is[d] != xs[d]) { st.push_back(0); en.push_back(is[d]); ax.push_back(d); }
  if (!ax.empty()) x = e.add(OpKind::Slice, n.name + ".extent", {x, e.ints("s", st), e.ints("e", en), e.ints("a", ax)});
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis) perm.push_back(d);
  perm.push_back(axis);
  if (axis != rank - 1) x = transpose(e, n.name + ".axis_last", x, perm);
  Shape xe = is;
  xe[axis] = 1;
  xe.push_back(D);
  x = reshape(e, n.name + ".data", x, xe);
  std::string zero = e.constant("zero", {}, {0.0}, g.tensor(n.inputs[0]).type);
  std::string picked = e.add(OpKind::Where, n.name + ".select", {onehot, x, zero});
  Shape rows = {numel(is), D};
  std::string r = e.add(OpKind::ReduceSum, n.name, {reshape(e, n.name + ".rows", picked, rows)}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}});
  finish(e, n, r);
}

// Activations without a kernel of their own, from element-wise ops (Where selects, so the
// branch not taken, e.g. exp of a large x, never reaches the result).
void activation(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const std::string x = n.inputs[0];
  const ElemType t = g.tensor(x).type;
  auto c = [&](double v) { return e.constant(n.name + ".c", {}, {v}, t); };
  auto op = [&](OpKind k, std::vector<std::string> in) { return e.add(k, n.name, std::move(in)); };
  // alpha * (exp(x / scale) - 1), the negative branch of Elu / Selu / Celu
  auto em1 = [&](double alpha, double scale) {
    std::string xs = scale == 1.0 ? x : op(OpKind::Div, {x, c(scale)});
    return op(OpKind::Mul, {op(OpKind::Sub, {op(OpKind::Exp, {xs}), c(1.0)}), c(alpha)});
  };
  std::string y;
  switch (n.op) {
    case OpKind::Elu:
      y = op(OpKind::Where, {op(OpKind::Greater, {x, c(0.0)}), x, em1(n.f("alpha", 1.0), 1.0)});
      break;
    case OpKind::Selu: {
      std::string inner = op(OpKind::Where, {op(OpKind::Greater, {x, c(0.0)}), x, em1(n.f("alpha", 1.67326319217681884765625), 1.0)});
      y = op(OpKind::Mul, {inner, c(n.f("gamma", 1.05070102214813232421875))});
      break;
    }
    case OpKind::Celu: {
      const double a = n.f("alpha", 1.0);
      y = op(OpKind::Add, {op(OpKind::Max, {x, c(0.0)}), op(OpKind::Min, {em1(a, a), c(0.0)})});
      break;
    }
    case OpKind::ThresholdedRelu:
      y = op(OpKind::Where, {op(OpKind::Greater, {x, c(n.f("alpha", 1.0))}), x, c(0.0)});
      break;
    case OpKind::Softsign: y = op(OpKind::Div, {x, op(OpKind::Add, {op(OpKind::Abs, {x}), c(1.0)})}); break;
    case OpKind::Shrink: {
      const double l = n.f("lambd", 0.5), b = n.f("bias", 0.0);
      std::string hi = op(OpKind::Where, {op(OpKind::Greater, {x, c(l)}), op(OpKind::Sub, {x, c(b)}), c(0.0)});
      y = op(OpKind::Where, {op(OpKind::Less, {x, c(-l)}), op(OpKind::Add, {x, c(b)}), hi});
      break;
    }
    case OpKind::PRelu:  // slope broadcast to x (unidirectional)
      y = op(OpKind::Where, {op(OpKind::Less, {x, c(0.0)}), op(OpKind::Mul, {x, n.inputs[1]}), x});
      break;
    default: throw UnsupportedError(fmt::format("unsupported: op {} (no decomposition) at node '{}'", op_name(n.op), n.name));
  }
  finish(e, n, y);
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

// Tile: x [d0, .., dn] viewed as [1, d0, .., 1, dn], broadcast to [r0, d0, .., rn, dn] (one
// strided copy) and read back as [r0 d0, .., rn dn].
void tile(GraphEditor& e, const Node& n) {
  const Shape xs = shape_of(e.graph(), n.inputs[0]);
  const auto reps = const_ints(e.graph(), n, 1);
  Shape split, big;
  for (size_t i = 0; i < xs.size(); ++i) {
    split.insert(split.end(), {1, xs[i]});
    big.insert(big.end(), {reps[i], xs[i]});
  }
  if (numel(big) == 0 || numel(xs) == 0) {  // an empty result: a constant with no elements
    auto& out = e.graph().tensor(n.outputs[0]);
    out.data = std::vector<double>{};
    return;
  }
  std::string y = reshape(e, n.name + ".split", n.inputs[0], split);
  y = e.add(OpKind::Expand, n.name, {y, e.ints("shape", big)});
  finish(e, n, y);
}

// Resize (nearest, linear): per resized axis one MatMul by its constant [out, in] interpolation
// matrix (resize_params.h): the last axis as x [rows, in] @ M^T, another as M @ x [.., in, rest]
// (batched over the axes before it). Exact selection for nearest; linear's weights in fp32.
void resize(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  Shape cur = shape_of(g, n.inputs[0]);
  const ResizeParams p = resize_params(g, n, cur);
  std::string y = n.inputs[0];
  for (const ResizeAxis& ax : p.axes) {
    const std::vector<double> matrix = resize_matrix(p, ax);
    const size_t a = static_cast<size_t>(ax.axis);
    const int64_t before = numel(Shape(cur.begin(), cur.begin() + static_cast<long>(a)));
    const int64_t after = numel(Shape(cur.begin() + static_cast<long>(a) + 1, cur.end()));
    if (after == 1) {
      std::vector<double> mt(matrix.size());
      for (int64_t i = 0; i < ax.out; ++i)
        for (int64_t j = 0; j < ax.in; ++j) mt[static_cast<size_t>(j * ax.out + i)] = matrix[static_cast<size_t>(i * ax.in + j)];
      y = reshape(e, n.name + ".rows", y, {before, ax.in});
      y = e.add(OpKind::MatMul, n.name + ".interp", {y, e.constant("interpT", {ax.in, ax.out}, mt)});
    } else {
      y = reshape(e, n.name + ".rows", y, {before, ax.in, after});
      y = e.add(OpKind::MatMul, n.name + ".interp", {e.constant("interp", {ax.out, ax.in}, matrix), y});
    }
    cur[a] = ax.out;
  }
  finish(e, n, y);
}

}  // namespace trnsim::compiler::decomp
