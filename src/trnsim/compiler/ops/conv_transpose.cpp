// ConvTranspose (N-d; strides, pads, auto_pad, output_padding, output_shape, dilations, group)
// as a Conv over the zero-upsampled input: x with s - 1 zeros between its elements (Reshape to a
// size-1 axis after each spatial axis, Pad it to s, Reshape back), padded by (k - 1) * d - pad
// (cropped by a Slice where that is negative), convolved at stride 1 with the weight's
// channel axes swapped per group and its taps flipped. The Conv decomposes in turn
// (ops/conv.cpp: Im2col + MatMul), so the chip runs it; with a constant weight the swapped,
// flipped weight is folded into a constant. Exact up to the order of the sums. The upsampling
// costs s^d more MACs than a scatter (col2im) form would.
#include <algorithm>

#include "trnsim/common/checked.h"
#include "trnsim/compiler/op_unit.h"
#include "trnsim/compiler/unroll_limit.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

struct Params {
  std::vector<int64_t> kernel, strides, dilations, pad_begin, out;
  int64_t group = 1;
};

// The spatial parameters and output sizes as ONNX defines them: explicit pads, or SAME_* from
// the total padding (as onnx.reference, also when it is negative: onnxruntime clamps it to 0
// and then departs from the spec's output size), or output_shape's total padding; an
// output_shape larger than the natural size extends the end, output_padding likewise.
Params params(const Node& n, const Shape& x, const Shape& w) {
  if (x.size() < 3 || w.size() != x.size())
    throw ShapeError(fmt::format("node '{}': ConvTranspose input {} weight {} (want [N, C, spatial...] and [C, M/group, k...])", n.name, shape_str(x), shape_str(w)));
  const size_t sp = x.size() - 2;
  Params p;
  p.group = n.i("group", 1);
  if (p.group < 1 || x[1] != w[0] || x[1] % p.group != 0)
    throw ShapeError(fmt::format("node '{}': {} input channels, weight {} with group {}", n.name, x[1], shape_str(w), p.group));
  p.kernel = n.ints("kernel_shape", Shape(w.begin() + 2, w.end()));
  if (p.kernel != Shape(w.begin() + 2, w.end())) throw ShapeError(fmt::format("node '{}': kernel_shape disagrees with the weight {}", n.name, shape_str(w)));
  p.strides = n.ints("strides", std::vector<int64_t>(sp, 1));
  p.dilations = n.ints("dilations", std::vector<int64_t>(sp, 1));
  auto pads = n.ints("pads", std::vector<int64_t>(2 * sp, 0));
  auto opad = n.ints("output_padding", std::vector<int64_t>(sp, 0));
  auto oshape = n.ints("output_shape");
  if (oshape.size() == sp + 2) oshape.erase(oshape.begin(), oshape.begin() + 2);
  const std::string ap = n.s("auto_pad", "NOTSET");
  if (ap != "NOTSET" && ap != "VALID" && ap != "SAME_UPPER" && ap != "SAME_LOWER") unsupported(n, fmt::format("attribute auto_pad = {}", ap));
  if (p.strides.size() != sp || p.dilations.size() != sp || pads.size() != 2 * sp || opad.size() != sp || (!oshape.empty() && oshape.size() != sp))
    throw ShapeError(fmt::format("node '{}': strides/dilations/pads/output_padding/output_shape do not match {} spatial axes", n.name, sp));
  p.pad_begin.assign(sp, 0);
  p.out.assign(sp, 0);
  for (size_t i = 0; i < sp; ++i) {
    const int64_t s = p.strides[i], d = p.dilations[i], in = x[2 + i];
    if (s < 1 || d < 1 || p.kernel[i] < 1 || opad[i] < 0 || pads[i] < 0 || pads[i + sp] < 0)
      throw ShapeError(fmt::format("node '{}': strides, dilations, kernel sizes must be >= 1, pads and output_padding >= 0", n.name));
    // The taps are flipped one Slice each (conv_weight): bounded before that loop (a 2^40-wide
    // kernel ran for ever; fuzz, onnx_structured), and the size in checked arithmetic.
    if (p.kernel[i] > kMaxUnrolledTaps)
      throw UnsupportedError(fmt::format("unsupported: op ConvTranspose (a kernel {} taps wide; trnsim unrolls at most {}) at node '{}'",
                                         p.kernel[i], kMaxUnrolledTaps, n.name));
    const std::string what = fmt::format("node '{}': ConvTranspose output size", n.name);
    const int64_t natural = checked_add(checked_add(checked_mul(s, in - 1, what), opad[i], what),
                                        checked_add(checked_mul(p.kernel[i] - 1, d, what), 1, what), what);
    if (!oshape.empty() && oshape[i] < 1) throw ShapeError(fmt::format("node '{}': output_shape {} on spatial axis {}", n.name, oshape[i], i));
    if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      p.out[i] = oshape.empty() ? checked_mul(in, s, what) : oshape[i];
      const int64_t total = natural - p.out[i];
      const int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);  // floor, as the reference
      p.pad_begin[i] = ap == "SAME_UPPER" ? half : total - half;
    } else if (!oshape.empty()) {
      // pads ignored: the total padding comes from output_shape, the start taking the larger
      // half (ONNX's formula; onnxruntime the same). A larger output_shape extends the end
      // (onnxruntime and onnx.reference); a smaller one cut the end here, so the wrong half of
      // the rows came out (fuzz round 8, differential against onnxruntime).
      p.out[i] = oshape[i];
      const int64_t total = natural - p.out[i];
      p.pad_begin[i] = total > 0 ? total - total / 2 : 0;
    } else {
      if (ap == "NOTSET") p.pad_begin[i] = pads[i];
      p.out[i] = natural - (ap == "NOTSET" ? checked_add(pads[i], pads[i + sp], what) : 0);
    }
    if (p.out[i] < 1) throw ShapeError(fmt::format("node '{}': output size {} on spatial axis {}", n.name, p.out[i], i));
  }
  return p;
}

void infer(Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  const Shape& w = input(g, n, 1).shape;
  const Params p = params(n, x, w);
  const int64_t m = w[1] * p.group;
  if (has_input(n, 2) && input(g, n, 2).shape != Shape{m})
    throw ShapeError(fmt::format("node '{}': bias {} for {} output channels", n.name, shape_str(input(g, n, 2).shape), m));
  Shape out = {x[0], m};
  out.insert(out.end(), p.out.begin(), p.out.end());
  set_output(g, n, 0, out, input(g, n, 0).type);
}

// The Conv weight [M, C/group, k...]: W [C, M/group, k...] with the channel axes swapped per
// group and every tap flipped (Slice with step -1).
std::string conv_weight(GraphEditor& e, const Node& n, const Params& p) {
  const Shape w = shape_of(e.graph(), n.inputs[1]);
  const int64_t g = p.group, cg = w[0] / g, mg = w[1];
  const size_t sp = p.kernel.size();
  Shape grouped = {g, cg, mg};
  grouped.insert(grouped.end(), p.kernel.begin(), p.kernel.end());
  std::vector<int64_t> perm = {0, 2, 1};
  for (size_t i = 0; i < sp; ++i) perm.push_back(static_cast<int64_t>(3 + i));
  std::string t = transpose(e, n.name + ".weight", reshape(e, n.name + ".weight", n.inputs[1], grouped), perm);
  Shape conv = {g * mg, cg};
  conv.insert(conv.end(), p.kernel.begin(), p.kernel.end());
  t = reshape(e, n.name + ".weight", t, conv);
  for (size_t i = 0; i < sp; ++i) {  // flip the taps: their slices concatenated in reverse (folded when constant)
    if (p.kernel[i] == 1) continue;
    const auto axis = static_cast<int64_t>(2 + i);
    std::vector<std::string> taps;
    for (int64_t k = p.kernel[i] - 1; k >= 0; --k)
      taps.push_back(e.add(OpKind::Slice, n.name + ".flip", {t, e.ints("starts", {k}), e.ints("ends", {k + 1}), e.ints("axes", {axis})}));
    t = e.add(OpKind::Concat, n.name + ".flip", taps, {{"axis", axis}});
  }
  return t;
}

// x with s - 1 zeros after every element of each strided spatial axis ([.., D * s, ..]).
std::string upsample(GraphEditor& e, const Node& n, const Params& p, const std::string& x) {
  const Shape xs = shape_of(e.graph(), x);
  if (std::all_of(p.strides.begin(), p.strides.end(), [](int64_t s) { return s == 1; })) return x;
  Shape split = {xs[0], xs[1]}, up = {xs[0], xs[1]};
  std::vector<int64_t> begin(2 * p.strides.size() + 2, 0), end = begin;
  for (size_t i = 0; i < p.strides.size(); ++i) {
    split.push_back(xs[2 + i]);
    split.push_back(1);
    end[3 + 2 * i] = p.strides[i] - 1;
    up.push_back(xs[2 + i] * p.strides[i]);
  }
  std::vector<int64_t> pads = begin;
  pads.insert(pads.end(), end.begin(), end.end());
  const ElemType t = e.graph().tensor(x).type;
  std::string z = e.add(OpKind::Pad, n.name + ".upsample", {reshape(e, n.name + ".upsample", x, split), e.ints("pads", pads), e.constant(n.name + ".zero", {}, {0.0}, t)});
  return reshape(e, n.name + ".upsample", z, up);
}

bool decompose(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape xs = shape_of(g, n.inputs[0]);
  const Params p = params(n, xs, shape_of(g, n.inputs[1]));
  const size_t sp = p.kernel.size();
  std::string x = upsample(e, n, p, n.inputs[0]);
  const Shape us = shape_of(g, x);
  // Padding of the upsampled input so that a stride-1 conv gives p.out: negative ends crop.
  std::vector<int64_t> pad(2 * sp + 4, 0), crop_s, crop_e, crop_a;
  bool any_pad = false, any_crop = false;
  for (size_t i = 0; i < sp; ++i) {
    const int64_t eff = (p.kernel[i] - 1) * p.dilations[i] + 1, len = us[2 + i];
    const int64_t b = eff - 1 - p.pad_begin[i], en = p.out[i] + eff - 1 - len - b;
    pad[2 + i] = std::max<int64_t>(b, 0);
    pad[sp + 4 + i] = std::max<int64_t>(en, 0);
    any_pad |= b > 0 || en > 0;
    crop_s.push_back(std::max<int64_t>(-b, 0));
    crop_e.push_back(len - std::max<int64_t>(-en, 0));
    crop_a.push_back(static_cast<int64_t>(2 + i));
    any_crop |= b < 0 || en < 0;
  }
  if (any_crop) x = e.add(OpKind::Slice, n.name + ".crop", {x, e.ints("starts", crop_s), e.ints("ends", crop_e), e.ints("axes", crop_a)});
  if (any_pad)
    x = e.add(OpKind::Pad, n.name + ".pad", {x, e.ints("pads", pad), e.constant(n.name + ".zero", {}, {0.0}, g.tensor(x).type)});
  std::vector<std::string> ins = {x, conv_weight(e, n, p)};
  if (has_input(n, 2)) ins.push_back(n.inputs[2]);
  std::string y = e.add(OpKind::Conv, n.name, ins, {{"dilations", p.dilations}, {"group", p.group}, {"kernel_shape", p.kernel}});
  finish(e, n, y);
  return true;
}

}  // namespace

void register_conv_transpose(OpRegistry& r) {
  r.push_back({.kind = OpKind::ConvTranspose, .name = "ConvTranspose", .cls = OpClass::Compute, .min_inputs = 2, .max_inputs = 3,
               .attributes = {"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape", "pads", "strides"},
               .rules = {.infer = infer, .decompose = decompose}});
}

}  // namespace trnsim::compiler
