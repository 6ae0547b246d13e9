#include "trnsim/compiler/op_params.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "trnsim/common/checked.h"
#include "trnsim/common/error.h"
#include "trnsim/compiler/op_table.h"

namespace trnsim::compiler {

namespace {
// An axis of `in`, which must have one: a rank-0 tensor (a scalar) has no axis to name.
int64_t axis_of(int64_t axis, int64_t rank, const Node& n) {
  if (rank == 0)
    throw ShapeError(fmt::format("node '{}': {} names axis {} of a rank-0 tensor (a scalar has no axes)", n.name,
                                 op_name(n.op), axis));
  return normalize_axis(axis, rank, n.name);
}
}  // namespace

const ConstData& const_values(const Graph& g, const Node& n, size_t input) {
  // A required input that is missing or empty: a one-line error for every op (Pad with no
  // pads, Slice with no ends: std::out_of_range; fuzz, onnx_structured).
  if (input >= n.inputs.size() || n.inputs[input].empty())
    throw ShapeError(fmt::format("node '{}': op {} needs input {} (missing)", n.name, op_name(n.op), input));
  const std::string& name = n.inputs[input];
  if (!g.is_const(name))
    throw ConstantRequiredError(fmt::format("unsupported: op {} (input {} '{}' computed at run time; it must be constant) at node '{}'",
                                            op_name(n.op), input, name, n.name), {name});
  return *g.tensor(name).data;
}

std::vector<int64_t> const_ints(const Graph& g, const Node& n, size_t input) {
  // Axes, shapes, pads, starts, repeats, K, sizes: ONNX types them int64 (or int32). A float
  // tensor there was truncated, and its NaN cast to int64 was undefined (UBSan; fuzz round 8,
  // an Unsqueeze whose axes were a float weight).
  const ConstData& data = const_values(g, n, input);  // present and constant, or a one-line error
  const TensorInfo& t = g.tensor(n.inputs[input]);
  if (!is_integral(t.type) || t.type == ElemType::Bool)
    throw ShapeError(fmt::format("node '{}' ({}): input {} '{}' is {}; the operator takes an integer tensor there (ONNX "
                                 "type constraint: int64 or int32)", n.name, op_name(n.op), input, t.name, elem_name(t.type)));
  std::vector<int64_t> v;
  // Values are held as doubles: INT64_MAX/MIN ("to the end" in Slice) round to +-2^63, which
  // must saturate instead of overflowing the conversion.
  for (double d : data) {
    if (std::isnan(d))  // an integer tensor folded on the host from an undefined value
      throw ShapeError(fmt::format("node '{}' ({}): input {} '{}' holds NaN where an integer is needed", n.name, op_name(n.op), input, t.name));
    v.push_back(d >= 0x1p63 ? std::numeric_limits<int64_t>::max() : d <= -0x1p63 ? std::numeric_limits<int64_t>::min() : static_cast<int64_t>(d));
  }
  return v;
}

double const_scalar(const Graph& g, const Node& n, size_t input, double def) {
  if (input >= n.inputs.size() || n.inputs[input].empty()) return def;
  const std::string& name = n.inputs[input];
  if (!g.is_const(name))
    throw ConstantRequiredError(fmt::format("unsupported: op {} (input '{}' computed at run time; it must be constant) at node '{}'",
                                            op_name(n.op), name, n.name), {name});
  const auto& d = *g.tensor(name).data;
  if (d.size() != 1) throw ShapeError(fmt::format("node '{}': input '{}' must be a scalar", n.name, name));
  return d[0];
}

int64_t const_int_scalar(const Graph& g, const Node& n, size_t input, int64_t def) {
  if (input >= n.inputs.size() || n.inputs[input].empty()) return def;
  const std::vector<int64_t> v = const_ints(g, n, input);
  if (v.size() != 1) throw ShapeError(fmt::format("node '{}': input '{}' must be a scalar", n.name, n.inputs[input]));
  return v[0];
}

// ONNX defines keepdims 0 and 1 only; onnxruntime keeps for 1 alone, so another value was a
// silent shape disagreement (fuzz round 7): refused, naming the node
bool keepdims(const Node& n) {
  const int64_t k = n.i("keepdims", 1);
  if (k != 0 && k != 1) throw ShapeError(fmt::format("node '{}': keepdims = {}, expected 0 or 1", n.name, k));
  return k == 1;
}

std::vector<int64_t> reduce_axes(const Graph& g, const Node& n, int64_t rank) {
  std::vector<int64_t> axes;
  if (n.has("axes")) axes = n.ints("axes");
  else if (n.inputs.size() > 1 && !n.inputs[1].empty()) axes = const_ints(g, n, 1);
  if (axes.empty()) {
    if (n.i("noop_with_empty_axes", 0)) return {};
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  for (auto& a : axes) a = normalize_axis(a, rank, n.name);
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

std::vector<int64_t> transpose_perm(const Node& n, int64_t rank) {
  std::vector<int64_t> p = n.ints("perm");
  if (p.empty())
    for (int64_t i = rank - 1; i >= 0; --i) p.push_back(i);
  if (static_cast<int64_t>(p.size()) != rank)
    throw ShapeError(fmt::format("node '{}': perm has {} entries for rank {}", n.name, p.size(), rank));
  std::vector<bool> seen(rank, false);
  for (auto& a : p) {
    a = normalize_axis(a, rank, n.name);
    if (seen[a]) throw ShapeError(fmt::format("node '{}': perm repeats axis {}", n.name, a));
    seen[a] = true;
  }
  return p;
}

std::vector<SliceRange> slice_ranges(const Graph& g, const Node& n, const Shape& in) {
  std::vector<int64_t> starts, ends, axes, steps;
  if (n.has("starts")) {
    starts = n.ints("starts");
    ends = n.ints("ends");
    axes = n.ints("axes");
  } else {
    // Opset 10+: starts and ends are inputs 1 and 2, both required (a missing one was
    // std::out_of_range; fuzz, onnx).
    if (n.inputs.size() < 3 || n.inputs[1].empty() || n.inputs[2].empty())
      throw ShapeError(fmt::format("node '{}': Slice needs inputs starts and ends (or, before opset 10, those attributes)", n.name));
    starts = const_ints(g, n, 1);
    ends = const_ints(g, n, 2);
    if (n.inputs.size() > 3 && !n.inputs[3].empty()) axes = const_ints(g, n, 3);
    if (n.inputs.size() > 4 && !n.inputs[4].empty()) steps = const_ints(g, n, 4);
  }
  const int64_t rank = static_cast<int64_t>(in.size());
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    throw ShapeError(fmt::format("node '{}': starts, ends, axes and steps differ in length", n.name));
  std::vector<SliceRange> r(in.size());
  for (size_t i = 0; i < in.size(); ++i) r[i] = {0, 1, in[i]};
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t a = axis_of(axes[i], rank, n);
    if (steps[i] == 0) throw ShapeError(fmt::format("node '{}': slice step 0", n.name));
    r[a] = slice_range(starts[i], ends[i], steps[i], in[a]);
  }
  return r;
}

std::vector<int64_t> unsqueeze_axes(const Graph& g, const Node& n, int64_t in_rank) {
  std::vector<int64_t> axes = n.has("axes") ? n.ints("axes") : const_ints(g, n, 1);
  // The output rank from the axes' values, not the axes input's declared shape (a model whose
  // data and dims disagreed inserted past the end: ASan, fuzz round 8).
  const int64_t out_rank = checked_add(in_rank, static_cast<int64_t>(axes.size()), fmt::format("node '{}': Unsqueeze rank", n.name));
  for (auto& a : axes) a = normalize_axis(a, out_rank, n.name);
  std::sort(axes.begin(), axes.end());
  // ONNX refuses repeated axes; two equal high axes also inserted past the end.
  if (const auto twice = std::adjacent_find(axes.begin(), axes.end()); twice != axes.end())
    throw ShapeError(fmt::format("node '{}' (Unsqueeze): axis {} given twice", n.name, *twice));
  return axes;
}

std::vector<int64_t> squeeze_axes(const Graph& g, const Node& n, const Shape& in) {
  std::vector<int64_t> axes;
  if (n.has("axes")) axes = n.ints("axes");
  else if (n.inputs.size() > 1 && !n.inputs[1].empty()) axes = const_ints(g, n, 1);
  else
    for (size_t i = 0; i < in.size(); ++i)
      if (in[i] == 1) axes.push_back(static_cast<int64_t>(i));
  for (auto& a : axes) {
    a = axis_of(a, static_cast<int64_t>(in.size()), n);
    if (in[a] != 1) throw ShapeError(fmt::format("node '{}': squeezed axis {} has size {}", n.name, a, in[a]));
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

PadParams pad_params(const Graph& g, const Node& n, int64_t rank) {
  PadParams p;
  p.mode = n.s("mode", "constant");
  if (p.mode != "constant" && p.mode != "edge" && p.mode != "reflect" && p.mode != "wrap")
    throw UnsupportedError(fmt::format("unsupported: op Pad (attribute mode = {}) at node '{}'", p.mode, n.name));
  std::vector<int64_t> pads = n.has("pads") ? n.ints("pads") : const_ints(g, n, 1);
  if (n.has("value")) p.value = n.f("value", 0);
  else if (n.inputs.size() > 2 && !n.inputs[2].empty() && !g.is_const(n.inputs[2])) p.value_at_run_time = true;
  else p.value = const_scalar(g, n, 2, 0.0);
  std::vector<int64_t> axes;
  if (n.inputs.size() > 3 && !n.inputs[3].empty()) axes = const_ints(g, n, 3);
  else for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  if (pads.size() != 2 * axes.size()) throw ShapeError(fmt::format("node '{}': {} pads for {} axes", n.name, pads.size(), axes.size()));
  p.begin.assign(rank, 0);
  p.end.assign(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axis_of(axes[i], rank, n);
    p.begin[a] = pads[i];
    p.end[a] = pads[i + axes.size()];
    if (p.begin[a] < 0 || p.end[a] < 0)
      throw UnsupportedError(fmt::format("unsupported: op Pad (attribute pads<0) at node '{}'", n.name));
  }
  return p;
}

PadParams pad_params(const Graph& g, const Node& n, const Shape& in) {
  PadParams p = pad_params(g, n, static_cast<int64_t>(in.size()));
  for (size_t a = 0; a < in.size(); ++a) {
    if (p.mode == "reflect" && (p.begin[a] > 0 || p.end[a] > 0) && (p.begin[a] >= in[a] || p.end[a] >= in[a]))
      throw UnsupportedError(fmt::format("unsupported: op Pad (attribute mode = reflect with pads {}/{} >= axis size {}) at node '{}'",
                                         p.begin[a], p.end[a], in[a], n.name));
    if ((p.mode == "edge" || p.mode == "wrap") && (p.begin[a] > 0 || p.end[a] > 0) && in[a] == 0)
      throw ShapeError(fmt::format("node '{}': Pad mode {} of an empty axis", n.name, p.mode));
  }
  return p;
}

int64_t pad_source(const std::string& mode, int64_t j, int64_t size) {
  if (j >= 0 && j < size) return j;
  if (mode == "edge") return j < 0 ? 0 : size - 1;
  if (mode == "wrap") return ((j % size) + size) % size;
  // reflect (mirror without repeating the edge), folded until inside for pads < size
  while (j < 0 || j >= size) j = j < 0 ? -j : 2 * (size - 1) - j;
  return j;
}

std::vector<int64_t> split_sizes(const Graph& g, const Node& n, const Shape& in, int64_t axis) {
  axis_of(axis, static_cast<int64_t>(in.size()), n);
  std::vector<int64_t> s;
  if (n.has("split")) s = n.ints("split");
  else if (n.inputs.size() > 1 && !n.inputs[1].empty()) s = const_ints(g, n, 1);
  int64_t parts = static_cast<int64_t>(n.outputs.size());
  if (s.empty()) {
    if (parts < 1) throw ShapeError(fmt::format("node '{}': Split with no outputs", n.name));
    const int64_t each = ceil_div(in[axis], parts);  // (in + parts - 1) / parts overflowed at INT64_MAX
    for (int64_t i = 0, left = in[axis]; i < parts; ++i, left -= each) s.push_back(std::min(each, left));
  }
  int64_t total = 0;
  for (auto v : s) {
    if (v < 0) throw ShapeError(fmt::format("node '{}': split size {} is negative", n.name, v));
    total = checked_add(total, v, fmt::format("node '{}': split sizes", n.name));
  }
  if (total != in[axis] || static_cast<int64_t>(s.size()) != parts)
    throw ShapeError(fmt::format("node '{}': split sizes do not add up to axis size {}", n.name, in[axis]));
  return s;
}

WindowParams window_params(const Node& n, const Shape& x, const std::vector<int64_t>& kernel) {
  if (x.size() < 3) throw ShapeError(fmt::format("node '{}': {} needs an input of rank >= 3 (N, C, spatial...), got {}", n.name, op_name(n.op), shape_str(x)));
  const size_t sp = x.size() - 2;
  WindowParams w;
  w.kernel = kernel;
  w.strides = n.ints("strides", std::vector<int64_t>(sp, 1));
  w.dilations = n.ints("dilations", std::vector<int64_t>(sp, 1));
  auto pads = n.ints("pads", std::vector<int64_t>(2 * sp, 0));
  const std::string ap = n.s("auto_pad", "NOTSET");
  const bool ceil = n.i("ceil_mode", 0) != 0;
  if (ap != "NOTSET" && ap != "VALID" && ap != "SAME_UPPER" && ap != "SAME_LOWER")
    throw UnsupportedError(fmt::format("unsupported: op {} (attribute auto_pad = {}) at node '{}'", op_name(n.op), ap, n.name));
  if (w.strides.size() != sp || w.dilations.size() != sp || pads.size() != 2 * sp || kernel.size() != sp)
    throw ShapeError(fmt::format("node '{}': strides/dilations/pads/kernel do not match {} spatial axes", n.name, sp));
  for (size_t i = 0; i < sp; ++i) {
    if (w.strides[i] < 1 || w.dilations[i] < 1 || kernel[i] < 1)
      throw ShapeError(fmt::format("node '{}': strides, dilations and kernel sizes must be >= 1", n.name));
    if (pads[i] < 0 || pads[i + sp] < 0)
      throw UnsupportedError(fmt::format("unsupported: op {} (attribute pads < 0) at node '{}'", op_name(n.op), n.name));
  }
  w.pad_begin.assign(sp, 0);
  w.pad_end.assign(sp, 0);
  w.extra_end.assign(sp, 0);
  // Attributes are untrusted (any int64): the window arithmetic is checked (a stride of
  // INT64_MAX overflowed; fuzz, onnx).
  const std::string what = fmt::format("node '{}': the windows of {}", n.name, op_name(n.op));
  for (size_t i = 0; i < sp; ++i) {
    const int64_t in = x[2 + i], st = w.strides[i];
    const int64_t eff = checked_add(checked_mul(w.dilations[i], kernel[i] - 1, what), 1, what);
    int64_t o = 0;
    if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      o = in == 0 ? 0 : (in - 1) / st + 1;  // ceil(in / stride)
      const int64_t total = std::max<int64_t>(0, checked_add(checked_mul(o - 1, st, what), eff - in, what));
      w.pad_begin[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end[i] = total - w.pad_begin[i];
    } else {
      if (ap == "NOTSET") {
        w.pad_begin[i] = pads[i];
        w.pad_end[i] = pads[i + sp];
      }
      const int64_t padded = checked_add(checked_add(in, w.pad_begin[i], what), w.pad_end[i], what);
      const int64_t span = padded - eff;
      if (span < 0) throw ShapeError(fmt::format("node '{}': window larger than the padded input", n.name));
      o = span / st + 1;
      if (ceil && span % st != 0) {
        ++o;
        if (checked_mul(o - 1, st, what) >= padded - w.pad_end[i]) --o;  // that window would start in the end padding
      }
    }
    const int64_t last_end = checked_add(checked_mul(o - 1, st, what), eff, what);
    w.extra_end[i] = std::max<int64_t>(0, last_end - checked_add(checked_add(in, w.pad_begin[i], what), w.pad_end[i], what));
    w.out.push_back(o);
  }
  return w;
}

Shape reshape_target(const Graph& g, const Node& n, const Shape& in) {
  std::vector<int64_t> t = const_ints(g, n, 1);
  bool allowzero = n.i("allowzero", 0) != 0;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == 0 && !allowzero) {
      if (i >= in.size()) throw ShapeError(fmt::format("node '{}': reshape copies axis {} that the input lacks", n.name, i));
      t[i] = in[i];
    }
    if (t[i] < -1) throw ShapeError(fmt::format("node '{}': reshape to a negative dimension {}", n.name, t[i]));
    if (t[i] == -1) {
      if (infer >= 0) throw ShapeError(fmt::format("node '{}': reshape has two -1 entries", n.name));
      infer = static_cast<int64_t>(i);
    } else {
      known = checked_mul(known, t[i], fmt::format("node '{}': reshape target", n.name));
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel(in) % known) throw ShapeError(fmt::format("node '{}': cannot reshape {} to {}", n.name, shape_str(in), shape_str(t)));
    t[infer] = numel(in) / known;
  }
  if (numel(t) != numel(in)) throw ShapeError(fmt::format("node '{}': cannot reshape {} to {}", n.name, shape_str(in), shape_str(t)));
  return t;
}

Shape window_output_shape(const Node& n, const Shape& x, const std::vector<int64_t>& kernel, int64_t channels) {
  if (n.op == OpKind::Conv && n.i("ceil_mode", 0)) throw UnsupportedError(fmt::format("unsupported: op Conv (attribute ceil_mode = 1) at node '{}'", n.name));
  auto w = window_params(n, x, kernel);
  Shape out = {x[0], channels};
  out.insert(out.end(), w.out.begin(), w.out.end());
  return out;
}

}  // namespace trnsim::compiler
