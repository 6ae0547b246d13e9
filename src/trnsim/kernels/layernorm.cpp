#include "trnsim/kernels/layernorm.h"

#include <cmath>

#include "trnsim/kernels/row_kernel.h"
#include "trnsim/kernels/tiling.h"

namespace trnsim::kernels {
namespace {
constexpr int64_t kBnStatsMax = 512;  // free elements per bn_stats (NKI BN_STATS_FMAX)
enum Col : int64_t { kMean = 0, kVar = 1, kRstd = 2, kNegMeanRstd = 3, kCols = 4 };
}  // namespace

void layernorm(KernelBuilder& kb, const Tensor& x, const Tensor& gamma, const Tensor& beta,
               const Tensor& y, float eps, int64_t chunk) {
  const auto [rows, cols] = matrix_shape(x, "layernorm", "x");
  require_same_shape(x, y, "layernorm");
  for (const Tensor* v : {&gamma, &beta})
    if (!is_vector(*v, cols))
      throw ShapeError(fmt::format("layernorm: {} must be [{}] (one per column)", v->name(), cols));
  const DType dt = x.dtype();
  const int64_t dsz = x.ap().element_bytes();
  // Live per element: x, the normalised row and y, double-buffered; gamma, beta. The
  // normalised row is in the data dtype: bf16 tensor_tensor runs at VectorE's fast rate.
  const int64_t w = chunk > 0 ? std::min(chunk, cols) : chunk_width(cols, 2 * 3 * dsz + 2 * dsz, sbuf_budget(kb));
  const auto chunks = split(cols, w);
  const bool resident = chunks.size() == 1;
  // One bn_stats triple per (chunk, 512-column group), in order: a chunk that is not a
  // multiple of 512 starts a new group, so no two groups share a slot (bn_aggr weights each
  // triple by its count, so unequal groups aggregate exactly).
  int64_t nstats = 0;
  for (const Span& c : chunks) nstats += (c.size + kBnStatsMax - 1) / kBnStatsMax;

  ColumnParam g(kb, gamma, w, resident, "layernorm.gamma");
  ColumnParam b(kb, beta, w, resident, "layernorm.beta");
  // Row tiles are software-pipelined: the statistics of tile i+1 are issued before the
  // normalisation of tile i, so VectorE computes them while ScalarE normalises (each engine's
  // stream is in order); x of two tiles is live at once when it stays resident.
  TileRing xr(kb, Space::SBUF, {128, w}, dt, resident ? 3 : 2, "layernorm.x");
  TileRing nr(kb, Space::SBUF, {128, w}, dt, 2, "layernorm.norm");
  TileRing yr(kb, Space::SBUF, {128, w}, dt, 2, "layernorm.y");
  TileRing sr(kb, Space::SBUF, {128, 3 * nstats}, DType::F32, 3, "layernorm.bn_stats");
  TileRing mr(kb, Space::SBUF, {128, kCols}, DType::F32, 3, "layernorm.mean_var");

  struct Stage {
    Span rt;
    View first;  // x of the tile when resident
    View mv;
  };
  auto stats = [&](const Span& rt) {  // pass 1: statistics
    const int64_t p = rt.size;
    Stage sg{rt, {}, mr.next()};
    const Tile& st = sr.next();
    auto stat = [&](int64_t c) { return sg.mv.slice({{0, p}, {c, c + 1}}); };
    int64_t j = 0;  // the next bn_stats slot
    for (const Span& c : chunks) {
      View xt = corner(xr.next(), p, c.size);
      kb.load(xt, x.slice({rt.range(), c.range()}));
      if (resident) sg.first = xt;
      for (const Span& s : split(c.size, kBnStatsMax)) {
        kb.bn_stats(st.slice({{0, p}, {3 * j, 3 * j + 3}}), xt.slice({{0, p}, s.range()}));
        ++j;
      }
    }
    kb.bn_aggr(sg.mv.slice({{0, p}, {kMean, kVar + 1}}), st.slice({{0, p}, {0, 3 * nstats}}));
    kb.activation(stat(kRstd), stat(kVar), ActFunc::Rsqrt, 1.0f, eps);
    kb.tensor_scalar(stat(kNegMeanRstd), stat(kMean), AluOp::Mul, stat(kRstd), AluOp::Mul, -1.0f);
    return sg;
  };
  auto normalise = [&](const Stage& sg) {  // pass 2: normalise, scale, shift
    const int64_t p = sg.rt.size;
    auto stat = [&](int64_t c) { return sg.mv.slice({{0, p}, {c, c + 1}}); };
    for (const Span& c : chunks) {
      View xt = sg.first;
      if (!resident) {
        xt = corner(xr.next(), p, c.size);
        kb.load(xt, x.slice({sg.rt.range(), c.range()}));
      }
      View n = corner(nr.next(), p, c.size);
      kb.activation(n, xt, ActFunc::Copy, stat(kRstd), stat(kNegMeanRstd));
      kb.tensor_tensor(n, n, g.chunk(c, p), AluOp::Mul);
      View yt = corner(yr.next(), p, c.size);
      kb.tensor_tensor(yt, n, b.chunk(c, p), AluOp::Add);
      kb.store(y.slice({sg.rt.range(), c.range()}), yt);
    }
  };
  const auto tiles = split(rows, 128);
  if (!resident) {  // chunked rows reload x in pass 2 through the same ring: one tile at a time
    for (const Span& rt : tiles) normalise(stats(rt));
    return;
  }
  Stage cur = stats(tiles.front());
  for (size_t i = 0; i < tiles.size(); ++i) {
    Stage next;
    if (i + 1 < tiles.size()) next = stats(tiles[i + 1]);
    normalise(cur);
    cur = next;
  }
}

KernelDef layernorm_def() {
  KernelDef k;
  k.name = "layernorm";
  k.description = "layer normalisation of x[rows, cols] over cols, with gamma and beta [cols] (eps 1e-5)";
  k.params = {rows_param(), cols_param(), chunk_param()};
  k.dtypes = {DType::BF16, DType::F32};
  k.build = [](const hw::ChipSpec& chip, const KernelArgs& a) {
    KernelBuilder kb(chip);
    kb.set_name(fmt::format("layernorm_{}x{}_{}", a.i("rows"), a.i("cols"), numerics::name(a.dtype)));
    auto x = kb.hbm_input("x", {a.i("rows"), a.i("cols")}, a.dtype);
    auto gamma = kb.hbm_input("gamma", {a.i("cols")}, a.dtype);
    auto beta = kb.hbm_input("beta", {a.i("cols")}, a.dtype);
    auto y = kb.hbm_output("y", {a.i("rows"), a.i("cols")}, a.dtype);
    layernorm(kb, x, gamma, beta, y, kLayerNormEps, a.i("chunk"));
    return kb.build();
  };
  k.reference = [](const KernelArgs& a, const Tensors& in) {
    const int64_t rows = a.i("rows"), cols = a.i("cols");
    const auto &x = in.at("x"), &g = in.at("gamma"), &b = in.at("beta");
    std::vector<double> y(x.size());
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = &x[r * cols];
      double mean = 0, var = 0;
      for (int64_t c = 0; c < cols; ++c) mean += xr[c];
      mean /= double(cols);
      for (int64_t c = 0; c < cols; ++c) var += (xr[c] - mean) * (xr[c] - mean);
      var /= double(cols);
      double rstd = 1.0 / std::sqrt(var + double(kLayerNormEps));
      for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = (xr[c] - mean) * rstd * g[c] + b[c];
    }
    return ReferenceOutputs{{"y", std::move(y)}};
  };
  // Outputs are O(1) (normalised, gamma around 1); bf16 rounds the output to 2^-9 relative.
  k.tolerance = [](const KernelArgs& a) {
    return a.dtype == DType::F32 ? Tolerance{1e-5, 1e-5} : Tolerance{2e-2, 1e-2};
  };
  k.input_range = [](const KernelArgs&, const std::string& in) {
    return in == "gamma" ? std::pair{0.5, 1.5} : std::pair{-1.0, 1.0};
  };
  return k;
}

}  // namespace trnsim::kernels
