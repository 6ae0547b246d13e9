// Depthwise convolution (one input and one output channel per group) on VectorE and ScalarE: a
// matmul per channel would use one row of the PE array. The (image, channel) planes sit on the
// partitions, 128 at a time; a band of output rows reads its padded input rows once into SBUF,
// and each kernel tap is a strided window of that band scaled by the channel's weight (a
// per-partition scalar) on ScalarE and accumulated on VectorE, the bias folded into tap 0.
#include <fmt/format.h>

#include <algorithm>

#include "trnsim/common/error.h"
#include "trnsim/compiler/core_split.h"
#include "trnsim/compiler/lower_conv.h"
#include "trnsim/compiler/tile_views.h"
#include "trnsim/kernels/tiling.h"

namespace trnsim::compiler {
namespace {

using kernels::Span;

constexpr int64_t kBudgetBytes = 80 * 1024;  // per partition: bands, accumulators, double-buffered
constexpr int kQueuesIn = 4, kQueueW = 4, kQueueStore = 8, kQueuesStore = 4;

}  // namespace

int64_t depthwise_band_rows(const ConvGeom& g) {
  int64_t r = g.oh;
  auto bytes = [&](int64_t rows) { return 2 * (g.in_rows(rows) * g.wp() + 2 * rows * g.ow) * 4 + g.taps() * 4 + 4; };
  while (r > 1 && bytes(r) > kBudgetBytes) r = (r + 1) / 2;
  return bytes(r) <= kBudgetBytes ? r : 0;
}

void lower_depthwise(LowerCtx& ctx, const ConvGeom& g) {
  const int64_t R = depthwise_band_rows(g), wpad = g.wp(), planes = g.n * g.c, KK = g.taps();
  if (R == 0) throw UnsupportedError(fmt::format("unsupported: op ConvGemm (a depthwise band of one row does not fit SBUF) at node '{}'", ctx.n.name));
  const bool padded = g.pt || g.pl || g.pb || g.pr;
  const bool has_bias = ctx.n.inputs.size() > 2 && !ctx.n.inputs[2].empty();
  struct Piece { Span planes, rows; };
  std::vector<Piece> pieces;
  for (const Span& pl : kernels::split(planes, 128))
    for (const Span& r : kernels::split(g.oh, R)) pieces.push_back({pl, r});
  const auto& x = ctx.hbm(ctx.n.inputs[0]);
  const auto& y = ctx.hbm(ctx.n.outputs[0]);
  const auto& w = ctx.hbm(ctx.n.inputs[1]);  // [taps, C]
  for_each_core_share(ctx, static_cast<int64_t>(pieces.size()), [&](int64_t first, int64_t last) {
    auto& kb = ctx.kb;
    kernels::TileRing in(kb, isa::Space::SBUF, {128, g.in_rows(R) * wpad}, DType::F32, 2, ctx.n.name + ".band");
    kernels::TileRing acc(kb, isa::Space::SBUF, {128, R * g.ow}, DType::F32, 2, ctx.n.name + ".acc");
    kernels::TileRing tmp(kb, isa::Space::SBUF, {128, R * g.ow}, DType::F32, 2, ctx.n.name + ".tap");
    kernels::TileRing wt(kb, isa::Space::SBUF, {128, KK + 1}, DType::F32, 2, ctx.n.name + ".weight");
    int q = 0, sq = 0;
    int64_t loaded = -1;  // plane tile whose weights are in the current weight tile
    View wtile;
    for (int64_t i = first; i < last; ++i) {
      const Piece& pc = pieces[static_cast<size_t>(i)];
      const int64_t np = pc.planes.size, nr = pc.rows.size, ir = g.in_rows(nr);
      if (loaded != pc.planes.begin) {
        // Per partition (plane n*C + c): channel c's taps and bias, one DMA per run of channels.
        wtile = wt.next();
        for (int64_t p = 0; p < np;) {
          const int64_t c = (pc.planes.begin + p) % g.c, run = std::min(np - p, g.c - c);
          const View rows = wtile.slice({{p, p + run}});
          kb.load(sbuf_pattern(rows, run, 0, {{1, KK}}), hbm_pattern(w, c, run, 1, {{g.c, KK}}), {.queue = kQueueW});
          if (has_bias)
            kb.load(sbuf_pattern(rows, run, KK, {{1, 1}}), hbm_pattern(ctx.hbm(ctx.n.inputs[2]), c, run, 1, {{1, 1}}), {.queue = kQueueW});
          p += run;
        }
        loaded = pc.planes.begin;
      }
      const int64_t pr0 = pc.rows.begin * g.sh;
      const int64_t ra = std::max<int64_t>(0, pr0 - g.pt), rb = std::min<int64_t>(g.h, pr0 + ir - g.pt);
      const View t = in.next();
      if (padded) kb.memset(sbuf_pattern(t, np, 0, {{1, ir * wpad}}), 0.0f, {.engine = isa::Engine::GpSimd});
      if (rb > ra)
        kb.load(sbuf_pattern(t, np, (ra + g.pt - pr0) * wpad + g.pl, {{wpad, rb - ra}, {1, g.w}}),
                hbm_pattern(x, pc.planes.begin * g.h * g.w + ra * g.w, np, g.h * g.w, {{g.w, rb - ra}, {1, g.w}}),
                {.queue = q++ % kQueuesIn});
      const View a = kernels::corner(acc.next(), np, nr * g.ow);
      for (int64_t k = 0; k < KK; ++k) {
        const int64_t kr = k / g.kw, kc = k % g.kw;
        const View win = sbuf_pattern(t, np, kr * g.dh * wpad + kc * g.dw, {{g.sh * wpad, nr}, {g.sw, g.ow}});
        const View wk = wtile.slice({{0, np}, {k, k + 1}});
        if (k == 0) {
          kb.activation(a, win, isa::ActFunc::Copy, wk, has_bias ? kernels::Scalar(wtile.slice({{0, np}, {KK, KK + 1}})) : kernels::Scalar(0.0f));
          continue;
        }
        const View s = kernels::corner(tmp.next(), np, nr * g.ow);
        kb.activation(s, win, isa::ActFunc::Copy, wk);  // ScalarE scales the window
        kb.tensor_tensor(a, a, s, isa::AluOp::Add);      // VectorE accumulates
      }
      kb.store(hbm_pattern(y, (pc.planes.begin * g.oh + pc.rows.begin) * g.ow, np, g.oh * g.ow, {{1, nr * g.ow}}), a,
               {.queue = kQueueStore + sq++ % kQueuesStore});
    }
  });
}

}  // namespace trnsim::compiler
