// Conv (N-d, grouped, dilated, strided, padded). Per-form rule:
//  - 1-D and 2-D: one ConvGemm node, implicit GEMM on TensorE with channels on the partitions
//    and the taps as access patterns over an SBUF band (lower_conv.h), or for a depthwise conv
//    per-tap scaled windows on VectorE/ScalarE; the weight goes through a Transpose to
//    [taps x channels, M] that constant folding does once;
//  - otherwise (3-D, or a band that does not fit SBUF) as im2col + MatMul:
//  - group 1: a 1x1 stride-1 unpadded conv reads x as [N, C, P] directly (no copy); any other
//    kernel/stride/dilation/padding builds its columns with ONE Im2col node, a single overlapping
//    strided DMA access pattern over the padded input (no per-tap Slice nodes, no Concat);
//  - depthwise (Cg == Mg == 1): per-tap scaled windows (Slice + Mul + Add nodes);
//  - other groups: per group Slices + the same Im2col + MatMul.
#include <algorithm>

#include "trnsim/common/checked.h"
#include "trnsim/compiler/lower_conv.h"
#include "trnsim/compiler/lower_elementwise.h"
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

void infer(Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  const Shape& w = input(g, n, 1).shape;
  if (x.size() < 3 || w.size() != x.size()) throw ShapeError(fmt::format("node '{}': Conv input {} weight {}", n.name, shape_str(x), shape_str(w)));
  Shape k(w.begin() + 2, w.end());
  auto ks = n.ints("kernel_shape", k);
  if (ks != k) throw ShapeError(fmt::format("node '{}': kernel_shape disagrees with the weight", n.name));
  if (x[1] != checked_mul(w[1], n.i("group", 1), fmt::format("node '{}': Conv channels", n.name))) throw ShapeError(fmt::format("node '{}': {} input channels, weight expects {} x group", n.name, x[1], w[1]));
  set_output(g, n, 0, window_output_shape(n, x, k, w[0]), input(g, n, 0).type);
}

// The Im2col attributes: kernel_shape, strides, dilations, out_spatial (the output's spatial dims).
Shape im2col_shape(const Node& n, const Shape& x) {
  const auto k = n.ints("kernel_shape"), o = n.ints("out_spatial");
  return {x[0], checked_mul(x[1], numel(k), "Im2col rows"), numel(o)};
}

void infer_im2col(Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  if (x.size() != n.ints("kernel_shape").size() + 2) throw ShapeError(fmt::format("node '{}': Im2col input {} for a {}-d kernel", n.name, shape_str(x), n.ints("kernel_shape").size()));
  set_output(g, n, 0, im2col_shape(n, x), input(g, n, 0).type);
}

// The input read as [N, C, k_1..k_d, o_1..o_d]: element (n, c, k, o) is
// x[n, c, o_i * stride_i + k_i * dilation_i] (overlapping windows, one access pattern).
SView im2col_source(const Node& n, const std::string& x, const Shape& xs) {
  const auto k = n.ints("kernel_shape"), o = n.ints("out_spatial");
  const size_t sp = k.size();
  const auto st = n.ints("strides", std::vector<int64_t>(sp, 1)), dil = n.ints("dilations", std::vector<int64_t>(sp, 1));
  const auto xst = row_major_strides(xs);
  SView v{x, 0, {xs[0], xs[1]}, {xst[0], xst[1]}};
  for (size_t i = 0; i < sp; ++i) { v.shape.push_back(k[i]); v.strides.push_back(dil[i] * xst[2 + i]); }
  for (size_t i = 0; i < sp; ++i) { v.shape.push_back(o[i]); v.strides.push_back(st[i] * xst[2 + i]); }
  return v;
}

void eval_im2col(Graph& g, const Node& n, std::vector<double>& out) {
  const auto& x = data(g, n.inputs[0]);
  const SView v = im2col_source(n, n.inputs[0], input(g, n, 0).shape);
  std::vector<int64_t> idx(v.shape.size(), 0);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t off = v.offset;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * v.strides[d];
    out[i] = x[static_cast<size_t>(off)];
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < v.shape[d]) break;
      idx[d] = 0;
    }
  }
}

// One DMA copy of the overlapping windows into the column tensor. The axes are ordered so the
// DMA tiles are few and wide: channels on the rows when the output rows are short (deep layers,
// small images), output rows on the rows otherwise.
void lower_im2col(LowerCtx& ctx) {
  const Node& n = ctx.n;
  const Shape& xs = ctx.g.tensor(n.inputs[0]).shape;
  SView in = im2col_source(n, n.inputs[0], xs);
  SView out = row_major(n.outputs[0], in.shape);
  if (numel(in.shape) == 0) return;
  const size_t r = in.shape.size(), sp = (r - 2) / 2;
  const int64_t C = xs[1], rows = in.shape[r - 2];
  const int64_t by_rows = C * ((rows + 127) / 128), by_channels = (sp > 1 ? rows : 1) * ((C + 127) / 128);
  if (sp >= 1 && by_channels < by_rows) {
    // [N, k..., o_1..o_{d-1}, C, o_d]
    std::vector<size_t> perm = {0};
    for (size_t i = 2; i < r - 1; ++i) perm.push_back(i);
    perm.push_back(1);
    perm.push_back(r - 1);
    SView a{in.tensor, in.offset, {}, {}}, b{out.tensor, out.offset, {}, {}};
    for (auto d : perm) {
      a.shape.push_back(in.shape[d]); a.strides.push_back(in.strides[d]);
      b.shape.push_back(out.shape[d]); b.strides.push_back(out.strides[d]);
    }
    in = a;
    out = b;
  }
  copy_kernel(ctx, out, in);
}

// The columns [N, C*KK, P] of x (unpadded input: pads x first) for the conv node n.
std::string im2col(GraphEditor& e, const Node& n, const std::string& xp, const Shape& kernel, const Shape& os) {
  const Shape xs = shape_of(e.graph(), xp);
  const size_t sp = kernel.size();
  const auto st = n.ints("strides", std::vector<int64_t>(sp, 1)), dil = n.ints("dilations", std::vector<int64_t>(sp, 1));
  Shape o(os.begin() + 2, os.end());
  bool identity = true;
  for (size_t i = 0; i < sp; ++i) identity &= kernel[i] == 1 && st[i] == 1 && o[i] == xs[2 + i];
  if (identity) return reshape(e, n.name + ".im2col", xp, {xs[0], xs[1], numel(o)});  // 1x1 stride 1: x is its own im2col
  return e.add(OpKind::Im2col, n.name + ".im2col", {xp},
               {{"kernel_shape", std::vector<int64_t>(kernel.begin(), kernel.end())}, {"strides", st}, {"dilations", dil},
                {"out_spatial", std::vector<int64_t>(o.begin(), o.end())}});
}

// The ConvGemm form of a 1-D or 2-D conv; false when a band of one
// output row would not fit SBUF (or the rank is other), leaving the Im2col form.
bool conv_gemm(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape xs = shape_of(g, n.inputs[0]), ws = shape_of(g, n.inputs[1]), os = shape_of(g, n.outputs[0]);
  const int64_t group = n.i("group", 1), Cg = ws[1];
  if (xs.size() != 3 && xs.size() != 4) return false;
  const Shape kernel(ws.begin() + 2, ws.end());
  const WindowParams wp = window_params(n, xs, kernel);
  const bool one_d = xs.size() == 3;
  auto two = [&](const std::vector<int64_t>& v, int64_t one) { return one_d ? std::vector<int64_t>{one, v[0]} : v; };
  const auto k = two(kernel, 1), st = two(wp.strides, 1), dil = two(wp.dilations, 1), pb = two(wp.pad_begin, 0), pe = two(wp.pad_end, 0);
  const int64_t taps = k[0] * k[1];
  ConvGeom geom{.n = xs[0], .c = xs[1], .h = one_d ? 1 : xs[2], .w = xs.back(), .m = ws[0], .group = group,
                .kh = k[0], .kw = k[1], .sh = st[0], .sw = st[1], .dh = dil[0], .dw = dil[1],
                .pt = pb[0], .pl = pb[1], .pb = pe[0], .pr = pe[1], .oh = one_d ? 1 : os[2], .ow = os.back(),
                .elem_bytes = 4, .epilogue_rings = 4};
  check_conv_geometry(geom, n.name);
  // Few channels (an RGB stem): stack a kernel row's taps on the partitions, from an input
  // padded in HBM (each tap one shifted copy; the kernel rows are row offsets of the same copy).
  const bool dw = depthwise(geom);
  geom.stack_rows = !dw && stacks_rows(geom);
  if (!dw && Cg <= kStackMaxChannels && (geom.kw > 1 || geom.stack_rows)) {
    if (!geom.stack_rows) geom.stack = std::min<int64_t>(geom.kw, 128 / Cg);
    geom.h += geom.pt + geom.pb;
    geom.w += geom.pl + geom.pr;
    geom.pt = geom.pl = geom.pb = geom.pr = 0;
  }
  if (dw ? depthwise_band_rows(geom) == 0 : !plan_conv(geom)) return false;
  std::string x = n.inputs[0];
  if (geom.stack > 1 || geom.stack_rows) x = pad_spatial(e, n, x, wp, 0.0);
  if (one_d) x = reshape(e, n.name + ".as2d", x, {geom.n, geom.c, 1, geom.w});
  // Weight rows [kh, kw, Cg] (tap-major), or [kw, Cg, kh] when kernel rows stack: then one
  // column tap's K tile (c, a) is one run of rows.
  const std::vector<int64_t> perm = one_d ? std::vector<int64_t>{2, 1, 0}
                                    : geom.stack_rows ? std::vector<int64_t>{3, 1, 2, 0} : std::vector<int64_t>{2, 3, 1, 0};
  std::string w = reshape(e, n.name + ".weight", transpose(e, n.name + ".weight", n.inputs[1], perm), {taps * Cg, geom.m});
  std::vector<std::string> in = {x, w};
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) in.push_back(n.inputs[2]);
  // A 2-D conv writes its output directly, so that the epilogue fusion sees its consumers.
  std::string y = e.add(OpKind::ConvGemm, n.name, in,
                        {{"kernel_shape", k}, {"strides", st}, {"dilations", dil},
                         {"pads", std::vector<int64_t>{geom.pt, geom.pl, geom.pb, geom.pr}}, {"group", group}, {"stack", geom.stack},
                         {"stack_rows", static_cast<int64_t>(geom.stack_rows)}},
                        one_d ? "" : n.outputs[0]);
  if (one_d) finish(e, n, y);
  return true;
}

bool decompose(GraphEditor& e, const Node& n) {
  if (conv_gemm(e, n)) return true;
  Graph& g = e.graph();
  const Shape xs = shape_of(g, n.inputs[0]), ws = shape_of(g, n.inputs[1]), os = shape_of(g, n.outputs[0]);
  const int64_t group = n.i("group", 1), M = ws[0], Cg = ws[1], Mg = M / group;
  const Shape kernel(ws.begin() + 2, ws.end());
  const int64_t KK = numel(kernel);
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
    return true;
  }
  std::vector<std::string> per_group;
  for (int64_t gi = 0; gi < group; ++gi) {
    std::string xg = xp, wg = n.inputs[1];
    if (group > 1) {
      xg = e.add(OpKind::Slice, n.name + ".group", {xp, e.ints("s", {gi * Cg}), e.ints("e", {(gi + 1) * Cg}), e.ints("a", {1})});
      wg = e.add(OpKind::Slice, n.name + ".wgroup", {wg, e.ints("s", {gi * Mg}), e.ints("e", {(gi + 1) * Mg}), e.ints("a", {0})});
    }
    std::string col = im2col(e, n, xg, kernel, os);  // [N, Cg*KK, P]
    std::string w2 = reshape(e, n.name + ".weight", wg, {Mg, Cg * KK});
    per_group.push_back(e.add(OpKind::MatMul, n.name, {w2, col}));   // [N, Mg, P]
  }
  std::string y = per_group.size() == 1 ? per_group[0] : e.add(OpKind::Concat, n.name + ".groups", per_group, {{"axis", int64_t{1}}});
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    std::string b = reshape(e, n.name + ".bias", n.inputs[2], {M, 1});
    y = e.add(OpKind::Add, n.name + ".bias", {y, b});
  }
  finish(e, n, y);
  return true;
}

}  // namespace

void register_conv(OpRegistry& r) {
  r.push_back({.kind = OpKind::Conv, .name = "Conv", .cls = OpClass::Compute, .min_inputs = 2, .max_inputs = 3,
               .attributes = {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"},
               .rules = {.infer = infer, .decompose = decompose}});
  r.push_back({.kind = OpKind::Im2col, .name = "Im2col", .cls = OpClass::Movement, .min_inputs = 1, .max_inputs = 1,
               .attributes = {"kernel_shape", "strides", "dilations", "out_spatial"},
               .internal = true,
               .rules = {.infer = infer_im2col, .eval = eval_im2col, .lower = lower_im2col}});
}

}  // namespace trnsim::compiler
