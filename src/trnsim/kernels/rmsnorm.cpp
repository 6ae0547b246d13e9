#include "trnsim/kernels/rmsnorm.h"

#include <cmath>

#include "trnsim/kernels/row_kernel.h"
#include "trnsim/kernels/tiling.h"

namespace trnsim::kernels {
namespace {
enum Col : int64_t { kSum = 0, kChunkSum = 1, kRstd = 2, kCols = 4 };
}  // namespace

void rmsnorm(KernelBuilder& kb, const Tensor& x, const Tensor& gamma, const Tensor& y, float eps,
             int64_t chunk) {
  const auto [rows, cols] = matrix_shape(x, "rmsnorm", "x");
  require_same_shape(x, y, "rmsnorm");
  if (!is_vector(gamma, cols))
    throw ShapeError(fmt::format("rmsnorm: gamma must be [{}] (one per column)", cols));
  const DType dt = x.dtype();
  const int64_t dsz = x.ap().element_bytes();
  // Live per element: x, the scaled row and y (all in the data dtype: bf16 runs VectorE at
  // its fast rate), double-buffered; gamma.
  const int64_t w = chunk > 0 ? std::min(chunk, cols) : chunk_width(cols, 2 * 3 * dsz + dsz, sbuf_budget(kb));
  const auto chunks = split(cols, w);
  const bool resident = chunks.size() == 1;

  ColumnParam g(kb, gamma, w, resident, "rmsnorm.gamma");
  TileRing xr(kb, Space::SBUF, {128, w}, dt, 2, "rmsnorm.x");
  TileRing nr(kb, Space::SBUF, {128, w}, dt, 2, "rmsnorm.scaled");
  TileRing yr(kb, Space::SBUF, {128, w}, dt, 2, "rmsnorm.y");
  TileRing sr(kb, Space::SBUF, {128, kCols}, DType::F32, 2, "rmsnorm.stats");

  for (const Span& rt : split(rows, 128)) {
    const int64_t p = rt.size;
    const Tile& st = sr.next();
    auto stat = [&](int64_t c) { return st.slice({{0, p}, {c, c + 1}}); };
    auto load_chunk = [&](const Span& c) {
      View t = corner(xr.next(), p, c.size);
      kb.load(t, x.slice({rt.range(), c.range()}));
      return t;
    };
    View first;
    for (size_t i = 0; i < chunks.size(); ++i) {  // pass 1: sum of squares
      View xt = load_chunk(chunks[i]);
      if (resident) first = xt;
      View sq = corner(nr.next(), p, chunks[i].size);  // squares are discarded; the sum is kept
      View acc = stat(i == 0 ? kSum : kChunkSum);
      kb.activation(sq, xt, ActFunc::Square, 1.0f, 0.0f, &acc);
      if (i > 0) kb.tensor_tensor(stat(kSum), stat(kSum), acc, AluOp::Add);
    }
    kb.activation(stat(kRstd), stat(kSum), ActFunc::Rsqrt, 1.0f / static_cast<float>(cols), eps);

    for (const Span& c : chunks) {  // pass 2: scale by rstd and gamma
      View xt = resident ? first : load_chunk(c);
      View n = corner(nr.next(), p, c.size);
      kb.activation(n, xt, ActFunc::Copy, stat(kRstd));
      View yt = corner(yr.next(), p, c.size);
      kb.tensor_tensor(yt, n, g.chunk(c, p), AluOp::Mul);
      kb.store(y.slice({rt.range(), c.range()}), yt);
    }
  }
}

KernelDef rmsnorm_def() {
  KernelDef k;
  k.name = "rmsnorm";
  k.description = "RMS normalisation of x[rows, cols] over cols, times gamma [cols] (eps 1e-6)";
  k.params = {rows_param(), cols_param(), chunk_param()};
  k.dtypes = {DType::BF16, DType::F32};
  k.build = [](const hw::ChipSpec& chip, const KernelArgs& a) {
    KernelBuilder kb(chip);
    kb.set_name(fmt::format("rmsnorm_{}x{}_{}", a.i("rows"), a.i("cols"), numerics::name(a.dtype)));
    auto x = kb.hbm_input("x", {a.i("rows"), a.i("cols")}, a.dtype);
    auto gamma = kb.hbm_input("gamma", {a.i("cols")}, a.dtype);
    auto y = kb.hbm_output("y", {a.i("rows"), a.i("cols")}, a.dtype);
    rmsnorm(kb, x, gamma, y, kRmsNormEps, a.i("chunk"));
    return kb.build();
  };
  k.reference = [](const KernelArgs& a, const Tensors& in) {
    const int64_t rows = a.i("rows"), cols = a.i("cols");
    const auto &x = in.at("x"), &g = in.at("gamma");
    std::vector<double> y(x.size());
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = &x[r * cols];
      double ss = 0;
      for (int64_t c = 0; c < cols; ++c) ss += double(xr[c]) * xr[c];
      double rstd = 1.0 / std::sqrt(ss / double(cols) + double(kRmsNormEps));
      for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = xr[c] * rstd * g[c];
    }
    return ReferenceOutputs{{"y", std::move(y)}};
  };
  k.tolerance = [](const KernelArgs& a) {
    return a.dtype == DType::F32 ? Tolerance{1e-5, 1e-5} : Tolerance{2e-2, 1e-2};
  };
  k.input_range = [](const KernelArgs&, const std::string& in) {
    return in == "gamma" ? std::pair{0.5, 1.5} : std::pair{-1.0, 1.0};
  };
  return k;
}

}  // namespace trnsim::kernels
