// Convolution as implicit GEMM on TensorE (the ConvGemm node that Conv's decomposition makes,
// ops/conv_gemm.cpp): no column matrix in HBM. Channels sit on the partitions: a band of
// output rows reads its input rows once into SBUF (padding done on chip), and every kernel
// tap is a strided access pattern over that band, the moving operand of one matmul that
// accumulates into PSUM over (tap, channel tile). The weight, laid out [taps x channels, M] at
// compile time (a folded Transpose), stays resident in SBUF for the whole node. Layers with
// few channels (the RGB stem) stack a kernel row's taps on the partitions instead: each column
// tap is one DMA of the padded input shifted by its offset (im2col through the DMA's access
// pattern, kw copies, not kh x kw), and each kernel row reads that stack at a row offset.
// Few channels under windows that do not overlap in rows (a patchify conv: stride >= kernel,
// ViT's 16 x 16 / 16) stack the kernel rows instead: partition (c, a) holds input rows
// oh * sh + a * dh, so every input element is read once, and each column tap is an offset.
// PSUM is evacuated by ScalarE with the bias (and a leading Relu) applied; the other fused
// epilogue ops (residual add, ...) run on the fp32 result band before one store per band.
#pragma once
#include <optional>

#include "trnsim/compiler/lower_context.h"

namespace trnsim::compiler {

struct ConvGeom {
  int64_t n = 1, c = 1, h = 1, w = 1;  // input, NCHW
  int64_t m = 1, group = 1;            // output channels, groups
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;  // padding applied on chip
  int64_t oh = 1, ow = 1;
  int64_t stack = 1;       // column taps per K tile (> 1: stacked on the partitions)
  bool stack_rows = false; // kernel rows x channels on the partitions (non-overlapping rows)
  int64_t elem_bytes = 2;  // TensorE operand width
  int epilogue_rings = 0;  // fp32 band tiles the epilogue needs (operand + scratch)
  int64_t cg() const { return c / group; }
  int64_t mg() const { return m / group; }
  int64_t taps() const { return kh * kw; }
  int64_t hp() const { return h + pt + pb; }
  int64_t wp() const { return w + pl + pr; }
  int64_t in_rows(int64_t out_rows) const { return (out_rows - 1) * sh + (kh - 1) * dh + 1; }
};

// Bands of the output: images x output rows computed from one SBUF load of their input.
struct ConvPlan {
  int64_t band_images = 1;  // > 1 only when a band is whole images (small feature maps)
  int64_t band_rows = 1;
};

// Channels per group at or below which taps are stacked on the partitions.
inline constexpr int64_t kStackMaxChannels = 32;
// Whether kernel rows stack on the partitions (ConvGemm's `stack_rows`): few channels, all
// kh x Cg rows in one K tile, and windows that never share an input row.
inline bool stacks_rows(const ConvGeom& g) {
  return g.kh > 1 && g.cg() <= kStackMaxChannels && g.kh * g.cg() <= 128 && g.sh >= (g.kh - 1) * g.dh + 1;
}
// SBUF per partition the kernel may use: half, so the neighbouring node's tiles fit beside it.
inline constexpr int64_t kConvBudgetBytes = 88 * 1024;

// Throws a ShapeError naming `node` when the geometry's SBUF and HBM sizes (a band of the
// whole image, the padded input, the weights at 8 B) overflow int64: declared dims and
// attributes reach the planning before the HBM plan bounds them (fuzz). After it, plan_conv,
// depthwise_band_rows and the lowerings compute in int64 safely.
void check_conv_geometry(const ConvGeom& g, const std::string& node);
// The largest bands that fit the budget, or none when even one output row does not (the
// decomposition then takes the Im2col path).
std::optional<ConvPlan> plan_conv(const ConvGeom& g, int64_t budget_bytes = kConvBudgetBytes);
// The geometry of a ConvGemm node with TensorE operands of `elem_bytes`.
ConvGeom conv_gemm_geom(const Graph& gr, const Node& n, int64_t elem_bytes);
void lower_conv_gemm(LowerCtx& ctx);

// Depthwise (one input and one output channel per group): on VectorE/ScalarE, not TensorE
// (lower_depthwise.cpp). Output rows per band, 0 when one row does not fit SBUF.
inline bool depthwise(const ConvGeom& g) { return g.group > 1 && g.group == g.c && g.m == g.c; }
int64_t depthwise_band_rows(const ConvGeom& g);
void lower_depthwise(LowerCtx& ctx, const ConvGeom& g);

}  // namespace trnsim::compiler
