// PoolWindow: max or sum pooling over 2-D windows as one windowed reduction per band (made by
// the MaxPool/AveragePool decomposition, ops/pool.cpp; never imported). The (image, channel)
// planes sit on the partitions, 128 at a time; a band of output rows reads its input rows once
// into SBUF (padding done on chip with the pad value), and one VectorE TensorReduce over the
// access pattern [rows, cols, kernel rows, kernel cols] (overlapping windows, strides and
// dilations in the pattern) reduces the innermost two axes. No window copies, no HBM round trip.
// Attributes: mode (0 max, 1 sum), kernel_shape, strides, dilations (2 each), pads (top, left,
// bottom, right), out_spatial (2), pad_value.
#include <algorithm>
#include <cmath>

#include "trnsim/common/checked.h"
#include "trnsim/compiler/core_split.h"
#include "trnsim/compiler/lower_context.h"
#include "trnsim/compiler/op_unit.h"
#include "trnsim/compiler/tile_views.h"
#include "trnsim/kernels/tiling.h"

namespace trnsim::compiler {
namespace {

using kernels::Span;

constexpr int64_t kBudgetBytes = 80 * 1024;  // per partition: input bands and results, double-buffered
constexpr int kQueuesIn = 4, kQueueStore = 8, kQueuesStore = 4;

struct PoolGeom {
  int64_t planes, h, w, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, oh, ow;
  int64_t wp() const { return w + pl + pr; }
  int64_t in_rows(int64_t r) const { return (r - 1) * sh + (kh - 1) * dh + 1; }
};

PoolGeom geom(const Graph& g, const Node& n) {
  const Shape& x = g.tensor(n.inputs[0]).shape;
  const auto k = n.ints("kernel_shape"), s = n.ints("strides"), d = n.ints("dilations"), p = n.ints("pads"), o = n.ints("out_spatial");
  const PoolGeom pg{x[0] * x[1], x[2], x[3], k[0], k[1], s[0], s[1], d[0], d[1], p[0], p[1], p[2], p[3], o[0], o[1]};
  // The band's sizes in checked arithmetic: declared dims reach the core-split estimate before
  // the HBM plan bounds them (a row of 2^62 overflowed `in_rows * wp`; fuzz).
  const std::string what = fmt::format("node '{}': pooling over {}", n.name, shape_str(x));
  const int64_t rows = checked_add(checked_mul(std::max<int64_t>(pg.oh - 1, 0), pg.sh, what), checked_mul(pg.kh - 1, pg.dh, what), what);
  const int64_t wp = checked_add(checked_add(pg.w, pg.pl, what), pg.pr, what);
  const int64_t planes = std::max<int64_t>(1, checked_mul(x[0], x[1], what));  // 0 planes still plan a band
  checked_add(checked_mul(checked_mul(checked_mul(planes, checked_add(rows, 1, what), what), wp, what), 8, what),
              checked_mul(checked_mul(pg.oh, pg.ow, what), 8, what), what);
  return pg;
}

// Output rows per band: the most whose double-buffered input band and result fit the budget.
// Elements per partition one engine instruction takes from SBUF (isa/validate.cpp).
constexpr int64_t kMaxFree = 65536;

// Output rows per band: the most whose double-buffered input band and result fit the budget,
// and whose window view (rows x ow x kh x kw) one reduce takes.
int64_t band_rows(const PoolGeom& g) {
  int64_t r = g.oh;
  while (r > 1 && (2 * (g.in_rows(r) * g.wp() + r * g.ow) * 4 > kBudgetBytes || r * g.ow * g.kh * g.kw > kMaxFree)) r = (r + 1) / 2;
  return r;
}

void infer(Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  const auto o = n.ints("out_spatial");
  if (x.size() != 4 || o.size() != 2) throw ShapeError(fmt::format("node '{}': PoolWindow input {}", n.name, shape_str(x)));
  set_output(g, n, 0, {x[0], x[1], o[0], o[1]}, input(g, n, 0).type);
}

// The reference (constant folding, host evaluation): out-of-range taps read the pad value.
void eval(Graph& gr, const Node& n, std::vector<double>& out) {
  const PoolGeom g = geom(gr, n);
  const auto& x = data(gr, n.inputs[0]);
  const bool is_max = n.i("mode", 0) == 0;
  const double pad = n.f("pad_value", 0.0);
  size_t i = 0;
  for (int64_t p = 0; p < g.planes; ++p)
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox, ++i) {
        double acc = is_max ? -INFINITY : 0.0;
        for (int64_t a = 0; a < g.kh; ++a)
          for (int64_t b = 0; b < g.kw; ++b) {
            const int64_t iy = oy * g.sh - g.pt + a * g.dh, ix = ox * g.sw - g.pl + b * g.dw;
            const bool in = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w;
            const double v = in ? x[static_cast<size_t>((p * g.h + iy) * g.w + ix)] : pad;
            acc = is_max ? std::max(acc, v) : acc + v;
          }
        out[i] = acc;
      }
}

int64_t units(const Graph& g, const Node& n) {
  const PoolGeom p = geom(g, n);
  return ceil_div(p.planes, 128) * ceil_div(p.oh, band_rows(p));
}

void lower(LowerCtx& ctx) {
  const PoolGeom g = geom(ctx.g, ctx.n);
  if (g.planes * g.oh * g.ow == 0) return;
  const bool is_max = ctx.n.i("mode", 0) == 0;
  const float pad_value = static_cast<float>(ctx.n.f("pad_value", 0.0));
  const bool padded = g.pt || g.pl || g.pb || g.pr;
  const int64_t R = band_rows(g), wpad = g.wp();
  struct Piece { Span planes, rows; };
  std::vector<Piece> pieces;
  for (const Span& pl : kernels::split(g.planes, 128))
    for (const Span& r : kernels::split(g.oh, R)) pieces.push_back({pl, r});
  const auto& x = ctx.hbm(ctx.n.inputs[0]);
  const auto& y = ctx.hbm(ctx.n.outputs[0]);
  for_each_core_share(ctx, static_cast<int64_t>(pieces.size()), [&](int64_t first, int64_t last) {
    auto& kb = ctx.kb;
    kernels::TileRing in(kb, isa::Space::SBUF, {128, g.in_rows(R) * wpad}, DType::F32, 2, ctx.n.name + ".band");
    kernels::TileRing out(kb, isa::Space::SBUF, {128, R * g.ow}, DType::F32, 2, ctx.n.name + ".result");
    int q = 0, sq = 0;
    for (int64_t i = first; i < last; ++i) {
      const Piece& pc = pieces[static_cast<size_t>(i)];
      const int64_t np = pc.planes.size, nr = pc.rows.size, ir = g.in_rows(nr);
      const int64_t pr0 = pc.rows.begin * g.sh;  // first padded input row of the band
      const int64_t ra = std::max<int64_t>(0, pr0 - g.pt), rb = std::min<int64_t>(g.h, pr0 + ir - g.pt);
      const View t = in.next();
      if (padded) kb.memset(sbuf_pattern(t, np, 0, {{1, ir * wpad}}), pad_value,
                            {.engine = isa::Engine::GpSimd});
      if (rb > ra) {
        kb.load(sbuf_pattern(t, np, (ra + g.pt - pr0) * wpad + g.pl, {{wpad, rb - ra}, {1, g.w}}),
                hbm_pattern(x, pc.planes.begin * g.h * g.w + ra * g.w, np, g.h * g.w, {{g.w, rb - ra}, {1, g.w}}), {.queue = q++ % kQueuesIn});
      }
      const View o = out.next();
      const View res = sbuf_pattern(o, np, 0, {{g.ow, nr}, {1, g.ow}});
      // One reduce per chunk of output columns when a single row's windows pass the engine's
      // free size (a 5 x 5 window over 600 columns: 75,000 elements; refused before).
      const int64_t cw = std::max<int64_t>(1, std::min(g.ow, kMaxFree / (nr * g.kh * g.kw)));
      for (int64_t c0 = 0; c0 < g.ow; c0 += cw) {
        const int64_t cn = std::min(cw, g.ow - c0);
        const View win = sbuf_pattern(t, np, c0 * g.sw, {{g.sh * wpad, nr}, {g.sw, cn}, {g.dh * wpad, g.kh}, {g.dw, g.kw}});
        kb.reduce(cn == g.ow ? res : sbuf_pattern(o, np, c0, {{g.ow, nr}, {1, cn}}), win, is_max ? isa::AluOp::Max : isa::AluOp::Add, 2);
      }
      kb.store(hbm_pattern(y, (pc.planes.begin * g.oh + pc.rows.begin) * g.ow, np, g.oh * g.ow, {{g.ow, nr}, {1, g.ow}}), res,
               {.queue = kQueueStore + sq++ % kQueuesStore});
    }
  });
}

}  // namespace

void register_pool_window(OpRegistry& r) {
  r.push_back({.kind = OpKind::PoolWindow, .name = "PoolWindow", .cls = OpClass::Compute, .min_inputs = 1, .max_inputs = 1,
               .attributes = {"mode", "kernel_shape", "strides", "dilations", "pads", "out_spatial", "pad_value"},
               .internal = true,
               .rules = {.infer = infer, .eval = eval, .lower = lower, .parallel_units = units}});
}

}  // namespace trnsim::compiler
