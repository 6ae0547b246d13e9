#include "trnsim/compiler/lower_conv.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "trnsim/common/checked.h"
#include "trnsim/common/error.h"
#include "trnsim/compiler/core_split.h"
#include "trnsim/compiler/lower_elementwise.h"
#include "trnsim/compiler/shape_util.h"
#include "trnsim/compiler/tile_views.h"

namespace trnsim::compiler {

using isa::ActFunc;
using kernels::Span;
using kernels::TileRing;

namespace {

constexpr int64_t kChunk = 512;         // one PSUM bank of fp32: a matmul's moving width
constexpr int64_t kMaxBandPixels = 8192;  // result band: 32 KiB of fp32 per partition
// DMA queues by role: input bands, weights, epilogue operands, stores.
constexpr int kQueueIn = 0, kQueuesIn = 6, kQueueW = 6, kQueuesW = 3, kQueueOperand = 9, kQueueStore = 10, kQueuesStore = 4;

// Input tiles one band needs at once: per group, its channel tiles (one tap each) or stacks.
int64_t in_tiles(const ConvGeom& g) {
  if (g.stack_rows) return g.group;
  return g.group * (g.stack > 1 ? ceil_div(g.kw, g.stack) : ceil_div(g.cg(), 128));
}

// Elements per partition of one band's input tile.
int64_t band_len(const ConvGeom& g, const ConvPlan& p) {
  if (g.stack_rows) return p.band_rows * g.wp();  // partition (c, a): kernel row a of each output row
  if (g.stack > 1) return ((p.band_rows - 1) * g.sh + (g.kh - 1) * g.dh) * g.wp() + (g.ow - 1) * g.sw + 1;
  return p.band_images * g.in_rows(p.band_rows) * g.wp();
}

int64_t bytes_needed(const ConvGeom& g, const ConvPlan& p) {
  const int64_t eb = g.elem_bytes, px = p.band_images * p.band_rows * g.ow;
  const int64_t weights = g.stack_rows ? g.group * g.kw * g.mg() * eb
                          : g.stack > 1 ? g.group * ceil_div(g.kw, g.stack) * g.kh * g.mg() * eb
                                        : g.group * ceil_div(g.cg(), 128) * g.taps() * g.mg() * eb;
  const int64_t input = 2 * in_tiles(g) * band_len(g, p) * eb;
  const bool padded = g.stack == 1 && !g.stack_rows && (g.pt || g.pl || g.pb || g.pr);
  const int64_t staging = padded ? 2 * p.band_images * g.in_rows(p.band_rows) * g.w * 4 : 0;
  const int64_t results = (2 + g.epilogue_rings) * px * 4;
  const int64_t bias = ceil_div(g.m, 128) * 4 * 2;
  return weights + input + staging + results + bias;
}

}  // namespace

std::optional<ConvPlan> plan_conv(const ConvGeom& g, int64_t budget_bytes) {
  if (g.ow > kChunk || g.oh < 1 || g.ow < 1) return std::nullopt;
  ConvPlan p;
  const int64_t image_px = g.oh * g.ow;
  if (g.stack == 1 && !g.stack_rows && 2 * image_px <= kChunk) {
    // Small feature maps: bands of whole images, so a matmul's moving operand spans images.
    p.band_rows = g.oh;
    p.band_images = std::clamp<int64_t>(kMaxBandPixels / 2 / image_px, 1, g.n);
    while (p.band_images > 1 && bytes_needed(g, p) > budget_bytes) p.band_images = ceil_div(p.band_images, 2);
    if (bytes_needed(g, p) <= budget_bytes) return p;
    p.band_images = 1;
  }
  p.band_rows = std::clamp<int64_t>(kMaxBandPixels / g.ow, 1, g.oh);
  while (p.band_rows > 1 && bytes_needed(g, p) > budget_bytes) p.band_rows = ceil_div(p.band_rows, 2);
  if (bytes_needed(g, p) > budget_bytes) return std::nullopt;
  return p;
}

void check_conv_geometry(const ConvGeom& g, const std::string& node) {
  const std::string what = fmt::format("node '{}': Conv over [{},{},{},{}] to [{},{}] with a {}x{} kernel and its pads, strides, dilations",
                                       node, g.n, g.c, g.h, g.w, g.oh, g.ow, g.kh, g.kw);
  auto mul = [&](std::initializer_list<int64_t> v) {
    int64_t r = 1;
    for (int64_t x : v) r = checked_mul(r, std::max<int64_t>(x, 1), what);
    return r;
  };
  auto add = [&](std::initializer_list<int64_t> v) {
    int64_t r = 0;
    for (int64_t x : v) r = checked_add(r, std::max<int64_t>(x, 0), what);
    return r;
  };
  const int64_t rows = add({mul({g.oh - 1, g.sh}), mul({g.kh - 1, g.dh}), 1, g.h, g.pt, g.pb});
  const int64_t cols = add({mul({g.ow - 1, g.sw}), mul({g.kw - 1, g.dw}), 1, g.w, g.pl, g.pr});
  const int64_t tiles = mul({g.group, std::max(g.kw, ceil_div(std::max<int64_t>(g.cg(), 1), 128))});
  add({mul({16, tiles, g.n, g.c, rows, cols}), mul({32, g.n, g.oh, g.ow}), mul({8, g.group, g.taps(), g.cg(), g.mg()}), mul({8, g.m})});
}

ConvGeom conv_gemm_geom(const Graph& gr, const Node& n, int64_t elem_bytes) {
  const Shape& xs = gr.tensor(n.inputs[0]).shape;
  const Shape& os = gr.tensor(n.outputs[0]).shape;
  const Shape& ws = gr.tensor(n.inputs[1]).shape;  // [taps x Cg, M]
  const auto k = n.ints("kernel_shape"), s = n.ints("strides"), d = n.ints("dilations"), pads = n.ints("pads");
  ConvGeom g{.n = xs[0], .c = xs[1], .h = xs[2], .w = xs[3], .m = ws[1], .group = n.i("group", 1),
             .kh = k[0], .kw = k[1], .sh = s[0], .sw = s[1], .dh = d[0], .dw = d[1],
             .pt = pads[0], .pl = pads[1], .pb = pads[2], .pr = pads[3], .oh = os[2], .ow = os[3],
             .stack = n.i("stack", 1), .stack_rows = n.i("stack_rows", 0) != 0, .elem_bytes = elem_bytes};
  // Scratch for the epilogue ops after a leading Relu (that one runs on the evacuation), and
  // operand tiles when one of them reads another tensor.
  const size_t first = !n.epilogue.empty() && n.epilogue[0].op == OpKind::Relu ? 1 : 0;
  if (n.epilogue.size() > first) g.epilogue_rings = 2;
  for (const auto& e : n.epilogue)
    if (!e.operand.empty()) g.epilogue_rings = 4;
  check_conv_geometry(g, n.name);
  return g;
}

namespace {

// Free dims with size-1 entries dropped (an access pattern has at most four).
FreeDims dims_of(std::initializer_list<std::pair<int64_t, int64_t>> d) {
  FreeDims out;
  for (const auto& x : d)
    if (x.second != 1) out.push_back(x);
  if (out.empty()) out.push_back({1, 1});
  return out;
}

struct Band {
  int64_t img, images, row, rows;
};

// One K tile: its weight rows (stationary) and where its moving operand comes from.
struct KTile {
  int64_t weight_tile;  // index into the resident weight tiles
  int64_t w_col0;       // first column of tap/stack in the weight tile
  int64_t rows;         // partitions (K)
  int64_t input;        // index into the band's input tiles
  int64_t offset;       // element offset of the tap inside the input tile (0 when stacked)
};

class ConvKernel {
 public:
  ConvKernel(LowerCtx& ctx, const ConvGeom& g, const ConvPlan& p) : ctx_(ctx), kb_(ctx.kb), g_(g), p_(p) {}

  void run(const std::vector<Band>& bands) {
    const bool upper = ctx_.n.i("sbuf_upper", 0) != 0;
    std::optional<kernels::TileScope> lower_half;
    if (upper) {  // the upper half of SBUF: a placeholder holds the lower half
      lower_half.emplace(kb_);
      const int64_t half = static_cast<int64_t>(kb_.chip().core.sbuf.bytes_per_partition.value()) / 2;
      lower_half->sbuf({128, half / 4}, DType::F32, ctx_.n.name + ".lower_half");
    }
    kernels::TileScope scope(kb_);
    load_weights(scope);
    load_bias(scope);
    const DType dt = ctx_.matmul_dtype;
    const int64_t len = band_len(g_, p_), px = p_.band_images * p_.band_rows * g_.ow;
    in_ring_.emplace(kb_, isa::Space::SBUF, std::vector<int64_t>{128, len}, dt, static_cast<int>(2 * in_tiles(g_)), ctx_.n.name + ".band");
    // Padded bands land their rows contiguously in a staging tile of the input's own dtype
    // (bf16 when the producer stored it at the operand width, operand_storage.h) first.
    if (padded())
      stage_.emplace(kb_, isa::Space::SBUF, std::vector<int64_t>{128, p_.band_images * g_.in_rows(p_.band_rows) * g_.w},
                     ctx_.hbm(ctx_.n.inputs[0]).dtype(), 2, ctx_.n.name + ".staging");
    acc_.emplace(kb_, isa::Space::PSUM, std::vector<int64_t>{128, kChunk}, DType::F32, 4, ctx_.n.name + ".acc");
    res_.emplace(kb_, isa::Space::SBUF, std::vector<int64_t>{128, px}, DType::F32, 2, ctx_.n.name + ".result");
    if (g_.epilogue_rings > 2) opr_.emplace(kb_, isa::Space::SBUF, std::vector<int64_t>{128, px}, DType::F32, 2, ctx_.n.name + ".operand");
    if (g_.epilogue_rings > 0) tmp_.emplace(kb_, isa::Space::SBUF, std::vector<int64_t>{128, px}, DType::F32, 2, ctx_.n.name + ".tmp");
    for (const Band& b : bands) band(b);
    in_ring_.reset();
    stage_.reset();
    acc_.reset();
    res_.reset();
    opr_.reset();
    tmp_.reset();
  }

 private:
  bool padded() const { return g_.stack == 1 && !g_.stack_rows && (g_.pt || g_.pl || g_.pb || g_.pr); }

  // Resident weights: per (group, channel tile) all taps [cin, taps x Mg] in one DMA, or per
  // (group, stack, kernel row) the rows of the stack's taps in that row [taps x Cg, Mg].
  void load_weights(kernels::TileScope& scope) {
    const std::string& wn = ctx_.n.inputs[1];
    const auto& wt = ctx_.g.is_const(wn) ? ctx_.hbm_const_as(wn, ctx_.matmul_dtype) : ctx_.hbm(wn);
    const int64_t cg = g_.cg(), mg = g_.mg(), M = g_.m;
    int q = 0;
    for (int64_t gi = 0; gi < g_.group; ++gi) {
      if (g_.stack_rows) {  // rows (b, c, a): partition c * kh + a, one run of mg per column tap b
        kernels::Tile t = scope.sbuf({g_.kh * cg, g_.kw * mg}, ctx_.matmul_dtype, ctx_.n.name + ".weight");
        kb_.load(t, hbm_pattern(wt, gi * mg, g_.kh * cg, M, dims_of({{g_.kh * cg * M, g_.kw}, {1, mg}})), {.queue = kQueueW + q++ % kQueuesW});
        weights_.push_back(t);
        continue;
      }
      if (g_.stack > 1) {
        for (const Span& s : kernels::split(g_.kw, g_.stack))
          for (int64_t a = 0; a < g_.kh; ++a) {
            kernels::Tile t = scope.sbuf({s.size * cg, mg}, ctx_.matmul_dtype, ctx_.n.name + ".weight");
            kb_.load(t, hbm_pattern(wt, (a * g_.kw + s.begin) * cg * M + gi * mg, s.size * cg, M, {{1, mg}}), {.queue = kQueueW + q++ % kQueuesW});
            weights_.push_back(t);
          }
        continue;
      }
      for (const Span& ci : kernels::split(cg, 128)) {
        kernels::Tile t = scope.sbuf({ci.size, g_.taps() * mg}, ctx_.matmul_dtype, ctx_.n.name + ".weight");
        kb_.load(t, hbm_pattern(wt, ci.begin * M + gi * mg, ci.size, M, dims_of({{cg * M, g_.taps()}, {1, mg}})), {.queue = kQueueW + q++ % kQueuesW});
        weights_.push_back(t);
      }
    }
  }

  // Per group one DMA for all full 128-channel tiles (column j: channels 128 j + partition),
  // one more for a partial last tile, in the order of kernels::split(mg, 128): each DMA pays
  // the fixed cost, and one per tile kept a 2048-channel layer's operand queue busy 22 us.
  void load_bias(kernels::TileScope& scope) {
    if (ctx_.n.inputs.size() < 3 || ctx_.n.inputs[2].empty()) return;
    const auto& bt = ctx_.hbm(ctx_.n.inputs[2]);
    const int64_t mg = g_.mg(), full = mg / 128, tail = mg % 128;
    for (int64_t gi = 0; gi < g_.group; ++gi) {
      if (full > 0) {
        kernels::Tile t = scope.sbuf({128, full}, DType::F32, ctx_.n.name + ".bias");
        kb_.load(t, hbm_pattern(bt, gi * mg, 128, 1, dims_of({{128, full}})), {.queue = kQueueOperand});
        for (int64_t j = 0; j < full; ++j) bias_.push_back(t.slice({{0, 128}, {j, j + 1}}));
      }
      if (tail > 0) {
        kernels::Tile t = scope.sbuf({tail, 1}, DType::F32, ctx_.n.name + ".bias");
        kb_.load(t, hbm_pattern(bt, gi * mg + full * 128, tail, 1, {{1, 1}}), {.queue = kQueueOperand});
        bias_.push_back(t);
      }
    }
  }

  // The K tiles of group gi for the band's input tiles (in the order load_band made them).
  std::vector<KTile> ktiles(int64_t gi) const {
    std::vector<KTile> out;
    const int64_t cg = g_.cg(), mg = g_.mg(), wpad = g_.wp();
    const int64_t ntile = in_tiles(g_) / g_.group;
    if (g_.stack_rows) {  // one K tile (c, a) per column tap, the tap an offset along the row
      for (int64_t b = 0; b < g_.kw; ++b) out.push_back({gi, b * mg, g_.kh * cg, gi, b * g_.dw});
      return out;
    }
    if (g_.stack > 1) {
      // A stack holds a run of column taps; each kernel row is the same stack at a row offset.
      int64_t i = 0;
      for (const Span& s : kernels::split(g_.kw, g_.stack)) {
        for (int64_t a = 0; a < g_.kh; ++a)
          out.push_back({(gi * ntile + i) * g_.kh + a, 0, s.size * cg, gi * ntile + i, a * g_.dh * wpad});
        ++i;
      }
      return out;
    }
    int64_t i = 0;
    for (const Span& ci : kernels::split(cg, 128)) {
      for (int64_t t = 0; t < g_.taps(); ++t) {
        const int64_t a = t / g_.kw, b = t % g_.kw;
        out.push_back({gi * ntile + i, t * mg, ci.size, gi * ntile + i, a * g_.dh * wpad + b * g_.dw});
      }
      ++i;
    }
    return out;
  }

  // Loads the band's input tiles: channels on partitions, padded rows [band.row * sh, +in_rows).
  std::vector<View> load_band(const Band& b) {
    std::vector<View> tiles;
    const auto& x = ctx_.hbm(ctx_.n.inputs[0]);
    const int64_t C = g_.c, H = g_.h, W = g_.w, cg = g_.cg(), plane = H * W;
    const int64_t ir = g_.in_rows(b.rows), wpad = g_.wp(), len = band_len(g_, {b.images, b.rows});
    for (int64_t gi = 0; gi < g_.group; ++gi) {
      if (g_.stack_rows) {
        // Per channel one DMA: partition c * kh + a takes row (band.row + r) * sh + a * dh of
        // the (already padded) plane for each output row r of the band.
        View t = in_ring_->next();
        for (int64_t c = 0; c < cg; ++c) {
          const View dst = sbuf_pattern(t, (c + 1) * g_.kh, 0, {{1, len}}).slice({{c * g_.kh, (c + 1) * g_.kh}});
          kb_.load(dst, hbm_pattern(x, (b.img * C + gi * cg + c) * plane + b.row * g_.sh * W, g_.kh, g_.dh * W,
                                    dims_of({{g_.sh * W, b.rows}, {1, W}})),
                   {.queue = kQueueIn + in_q_++ % kQueuesIn});
        }
        tiles.push_back(t);
        continue;
      }
      if (g_.stack > 1) {
        // Each column tap of a stack: the (already padded) input plane shifted by its offset.
        for (const Span& s : kernels::split(g_.kw, g_.stack)) {
          View t = in_ring_->next();
          const int64_t base = b.row * g_.sh * wpad;
          for (int64_t j = 0; j < s.size; ++j) {
            const int64_t off = (s.begin + j) * g_.dw;
            const View dst = sbuf_pattern(t, (j + 1) * cg, 0, {{1, len}}).slice({{j * cg, (j + 1) * cg}});
            kb_.load(dst, hbm_pattern(x, (b.img * C + gi * cg) * plane + base + off, cg, plane, {{1, len}}),
                     {.queue = kQueueIn + in_q_++ % kQueuesIn});
          }
          tiles.push_back(t);
        }
        continue;
      }
      for (const Span& ci : kernels::split(cg, 128)) {
        View t = in_ring_->next();
        const int64_t c0 = gi * cg + ci.begin;
        const int64_t pr0 = b.row * g_.sh;  // first padded row of the band
        const int64_t ra = std::max<int64_t>(0, pr0 - g_.pt), rb = std::min<int64_t>(H, pr0 + ir - g_.pt);
        if (!padded()) {
          kb_.load(sbuf_pattern(t, ci.size, 0, dims_of({{ir * W, b.images}, {1, ir * W}})),
                   hbm_pattern(x, (b.img * C + c0) * plane + pr0 * W, ci.size, plane, dims_of({{C * plane, b.images}, {1, ir * W}})),
                   {.queue = kQueueIn + in_q_++ % kQueuesIn});
        } else {
          // Padding on chip: zero the band, land the rows in fp32, copy them in at their offset.
          kb_.memset(sbuf_pattern(t, ci.size, 0, {{1, b.images * ir * wpad}}), 0.0f, {.engine = isa::Engine::GpSimd});
          if (rb > ra) {
            View st = stage_->next();
            const int64_t nr = rb - ra;
            kb_.load(sbuf_pattern(st, ci.size, 0, dims_of({{nr * W, b.images}, {1, nr * W}})),
                     hbm_pattern(x, (b.img * C + c0) * plane + ra * W, ci.size, plane, dims_of({{C * plane, b.images}, {1, nr * W}})),
                     {.queue = kQueueIn + in_q_++ % kQueuesIn});
            kb_.copy(sbuf_pattern(t, ci.size, (ra + g_.pt - pr0) * wpad + g_.pl, dims_of({{ir * wpad, b.images}, {wpad, nr}, {1, W}})),
                     sbuf_pattern(st, ci.size, 0, dims_of({{nr * W, b.images}, {W, nr}, {1, W}})));
          }
        }
        tiles.push_back(t);
      }
    }
    return tiles;
  }

  void band(const Band& b) {
    const std::vector<View> in = load_band(b);
    const int64_t wpad = g_.wp(), ir = g_.in_rows(b.rows), px = b.images * b.rows * g_.ow;
    // Chunks of at most one PSUM bank: whole images when a band spans images, else rows.
    struct Chunk { int64_t img, images, row, rows; };
    std::vector<Chunk> chunks;
    if (b.images > 1) {
      const int64_t per = std::max<int64_t>(1, kChunk / (b.rows * g_.ow));
      for (const Span& s : kernels::split(b.images, per)) chunks.push_back({s.begin, s.size, 0, b.rows});
    } else {
      for (const Span& s : kernels::split(b.rows, std::max<int64_t>(1, kChunk / g_.ow))) chunks.push_back({0, 1, s.begin, s.size});
    }
    const Epilogue* lead = ctx_.n.epilogue.empty() ? nullptr : &ctx_.n.epilogue[0];
    const bool relu_first = lead && lead->op == OpKind::Relu;
    int64_t bias_i = 0;
    for (int64_t gi = 0; gi < g_.group; ++gi) {
      const std::vector<KTile> kt = ktiles(gi);
      for (const Span& mt : kernels::split(g_.mg(), 128)) {
        View out = kernels::corner(res_->next(), mt.size, px);
        for (const Chunk& c : chunks) {
          const int64_t cpx = c.images * c.rows * g_.ow;
          View ps = kernels::corner(acc_->next(), mt.size, cpx);
          for (size_t k = 0; k < kt.size(); ++k) {
            const KTile& t = kt[k];
            const View& wtile = weights_[static_cast<size_t>(t.weight_tile)];
            const View stat = wtile.slice({{0, t.rows}, {t.w_col0 + mt.begin, t.w_col0 + mt.end()}});
            const int64_t img_len = g_.stack > 1 || g_.stack_rows ? 0 : ir * wpad;
            const int64_t row_step = g_.stack_rows ? wpad : g_.sh * wpad;  // stacked rows: one band row per output row
            const View mov = sbuf_pattern(in[static_cast<size_t>(t.input)], t.rows, c.img * img_len + c.row * row_step + t.offset,
                                       dims_of({{img_len, c.images}, {row_step, c.rows}, {g_.sw, g_.ow}}));
            kb_.matmul(ps, stat, mov, k == 0, k + 1 == kt.size());
          }
          const View dst = out.slice({{0, mt.size}, {(c.img * b.rows + c.row) * g_.ow, (c.img * b.rows + c.row) * g_.ow + cpx}});
          kernels::Scalar bias = bias_.empty() ? kernels::Scalar(0.0f) : kernels::Scalar(bias_[static_cast<size_t>(bias_i)]);
          kb_.activation(dst, ps, relu_first ? ActFunc::Relu : ActFunc::Copy, 1.0f, bias);  // ScalarE evacuates PSUM
        }
        epilogue(b, gi * g_.mg() + mt.begin, mt.size, out, relu_first ? 1 : 0);
        const auto& y = ctx_.hbm(ctx_.n.outputs[0]);
        const int64_t oplane = g_.oh * g_.ow;
        kb_.store(hbm_pattern(y, (b.img * g_.m + gi * g_.mg() + mt.begin) * oplane + b.row * g_.ow, mt.size, oplane,
                           dims_of({{g_.m * oplane, b.images}, {1, b.rows * g_.ow}})),
                  out, {.queue = kQueueStore + st_q_++ % kQueuesStore});
        ++bias_i;
      }
    }
  }

  // The fused epilogue ops after the first `skip` on the band's fp32 result [channels, pixels].
  void epilogue(const Band& b, int64_t ch0, int64_t nch, const View& out, size_t skip) {
    const auto& eps = ctx_.n.epilogue;
    const int64_t px = out.free_size();
    const Shape os = {g_.n, g_.m, g_.oh, g_.ow};
    for (size_t e = skip; e < eps.size(); ++e) {
      const Epilogue& ep = eps[e];
      View t = kernels::corner(tmp_->next(), nch, px);
      if (ep.operand.empty()) {
        apply_elementwise(kb_, ctx_.n, ep.op, out, out, nullptr, nullptr, t, false);
        continue;
      }
      const SView v = broadcast_view(ep.operand, ctx_.g.tensor(ep.operand).shape, os);
      const auto& ot = ctx_.hbm(ep.operand);
      const int64_t off = b.img * v.strides[0] + ch0 * v.strides[1] + b.row * v.strides[2];
      View o;
      if (v.strides[0] == 0 && v.strides[2] == 0 && v.strides[3] == 0) {
        // Per channel (a bias-like operand): one element per partition read with a zero stride.
        View one = kernels::corner(opr_->next(), nch, 1);
        kb_.load(one, hbm_pattern(ot, off, nch, v.strides[1], {{1, 1}}), {.queue = kQueueOperand});
        o = sbuf_pattern(one, nch, 0, {{0, px}});
      } else {
        o = kernels::corner(opr_->next(), nch, px);
        kb_.load(sbuf_pattern(o, nch, 0, dims_of({{b.rows * g_.ow, b.images}, {g_.ow, b.rows}, {1, g_.ow}})),
                 hbm_pattern(ot, off, nch, v.strides[1], dims_of({{v.strides[0], b.images}, {v.strides[2], b.rows}, {v.strides[3], g_.ow}})),
                 {.queue = kQueueOperand});
      }
      if (ep.operand_first) apply_elementwise(kb_, ctx_.n, ep.op, out, o, &out, nullptr, t, false);
      else apply_elementwise(kb_, ctx_.n, ep.op, out, out, &o, nullptr, t, false);
    }
  }

  LowerCtx& ctx_;
  KernelBuilder& kb_;
  ConvGeom g_;
  ConvPlan p_;
  std::vector<kernels::Tile> weights_;
  std::vector<View> bias_;
  std::optional<TileRing> in_ring_, stage_, acc_, res_, opr_, tmp_;
  int in_q_ = 0, st_q_ = 0;
};

}  // namespace

void lower_conv_gemm(LowerCtx& ctx) {
  const ConvGeom g = conv_gemm_geom(ctx.g, ctx.n, numerics::info(ctx.matmul_dtype).bits / 8);
  if (g.n * g.m * g.oh * g.ow == 0) return;
  if (depthwise(g)) return lower_depthwise(ctx, g);
  const auto plan = plan_conv(g);
  if (!plan) throw UnsupportedError(fmt::format("unsupported: op ConvGemm (a band of one output row does not fit SBUF) at node '{}'", ctx.n.name));
  std::vector<Band> bands;
  for (const Span& im : kernels::split(g.n, plan->band_images))
    for (const Span& r : kernels::split(g.oh, plan->band_rows)) bands.push_back({im.begin, im.size, r.begin, r.size});
  for_each_core_share(ctx, static_cast<int64_t>(bands.size()), [&](int64_t first, int64_t last) {
    ConvKernel k(ctx, g, *plan);
    k.run(std::vector<Band>(bands.begin() + first, bands.begin() + last));
  });
}

}  // namespace trnsim::compiler
