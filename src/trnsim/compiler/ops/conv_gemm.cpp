// ConvGemm: a 2-D convolution lowered as implicit GEMM on TensorE (lower_conv.h). Made by Conv's
// decomposition (ops/conv.cpp), never imported. Inputs: x [N, C, H, W], the weight laid out
// [taps x C/group, M] (a Transpose of the ONNX weight, folded at compile time), the bias [M]
// (optional). Attributes: kernel_shape, strides, dilations (2 each), pads (top, left, bottom,
// right; padding done on chip), group, stack (column taps per K tile), stack_rows (1: kernel rows
// on the partitions, the weight laid out [kw x C/group x kh, M] instead). Split across cores by
// bands. A depthwise conv runs on VectorE/ScalarE instead (lower_depthwise.cpp) and takes no
// fused epilogue (the fusion pass leaves it alone).
#include "trnsim/compiler/lower_conv.h"
#include "trnsim/compiler/op_unit.h"
#include "trnsim/common/checked.h"

namespace trnsim::compiler {
namespace {

void infer(Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  const Shape& w = input(g, n, 1).shape;
  const auto k = n.ints("kernel_shape"), s = n.ints("strides"), d = n.ints("dilations"), p = n.ints("pads");
  if (x.size() != 4 || w.size() != 2 || k.size() != 2 || s.size() != 2 || d.size() != 2 || p.size() != 4)
    throw ShapeError(fmt::format("node '{}': ConvGemm input {} weight {}", n.name, shape_str(x), shape_str(w)));
  const int64_t group = n.i("group", 1);
  if (group < 1 || x[1] % group != 0 || w[0] != k[0] * k[1] * (x[1] / group) || w[1] % group != 0)
    throw ShapeError(fmt::format("node '{}': ConvGemm weight {} for input {} in {} groups", n.name, shape_str(w), shape_str(x), group));
  Shape out = {x[0], w[1]};
  for (int i = 0; i < 2; ++i) out.push_back((x[2 + i] + p[i] + p[2 + i] - ((k[i] - 1) * d[i] + 1)) / s[i] + 1);
  set_output(g, n, 0, out, input(g, n, 0).type);
}

// The reference (constant folding, host evaluation): the convolution in double precision.
void eval(Graph& gr, const Node& n, std::vector<double>& out) {
  const ConvGeom g = conv_gemm_geom(gr, n, 4);
  const auto& x = data(gr, n.inputs[0]);
  const auto& w = data(gr, n.inputs[1]);  // [taps x Cg, M]
  const ConstData* bias = has_input(n, 2) ? &data(gr, n.inputs[2]) : nullptr;
  const int64_t cg = g.cg(), mg = g.mg();
  size_t i = 0;
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t m = 0; m < g.m; ++m)
      for (int64_t oy = 0; oy < g.oh; ++oy)
        for (int64_t ox = 0; ox < g.ow; ++ox, ++i) {
          double acc = bias ? (*bias)[static_cast<size_t>(m)] : 0.0;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t t = 0; t < g.taps(); ++t) {
              const int64_t iy = oy * g.sh - g.pt + (t / g.kw) * g.dh, ix = ox * g.sw - g.pl + (t % g.kw) * g.dw;
              if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
              const int64_t ch = (m / mg) * cg + c;
              const int64_t row = g.stack_rows ? ((t % g.kw) * cg + c) * g.kh + t / g.kw : t * cg + c;
              acc += x[static_cast<size_t>(((b * g.c + ch) * g.h + iy) * g.w + ix)] * w[static_cast<size_t>(row * g.m + m)];
            }
          out[i] = acc;
        }
}

int64_t bands(const Graph& g, const Node& n) {
  const ConvGeom geom = conv_gemm_geom(g, n, 2);
  if (depthwise(geom)) {
    const int64_t r = std::max<int64_t>(1, depthwise_band_rows(geom));
    return ceil_div(geom.n * geom.c, 128) * ceil_div(geom.oh, r);
  }
  const auto p = plan_conv(geom);
  if (!p) return 1;
  return ((geom.n + p->band_images - 1) / p->band_images) * ((geom.oh + p->band_rows - 1) / p->band_rows);
}

}  // namespace

void register_conv_gemm(OpRegistry& r) {
  r.push_back({.kind = OpKind::ConvGemm, .name = "ConvGemm", .cls = OpClass::Compute, .min_inputs = 2, .max_inputs = 3,
               .attributes = {"kernel_shape", "strides", "dilations", "pads", "group", "stack", "stack_rows"},
               .internal = true,
               .rules = {.infer = infer, .eval = eval, .lower = lower_conv_gemm, .parallel_units = bands}});
}

}  // namespace trnsim::compiler
