#include "trnsim/kernels/softmax.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "trnsim/common/error.h"
#include "trnsim/kernels/row_kernel.h"
#include "trnsim/kernels/tiling.h"

namespace trnsim::kernels {
namespace {

// Columns of the per-row-tile statistics tile ([128, 16] fp32); ping-pong pairs hold the
// online max/sum of the previous and the current chunk.
enum Col : int64_t { kNegMax = 0, kSum = 1, kRecip = 2, kMax0 = 3, kSum0 = 5, kNegNew0 = 7,
                     kChunkMax = 9, kAlpha = 10, kChunkSum = 11, kCols = 16 };

View col(const Tile& t, int64_t p, int64_t c) { return t.slice({{0, p}, {c, c + 1}}); }

}  // namespace

void softmax(KernelBuilder& kb, const Tensor& x, const Tensor& y, int64_t chunk) {
  const auto [rows, cols] = matrix_shape(x, "softmax", "x");
  require_same_shape(x, y, "softmax");
  const DType dt = x.dtype();
  const int64_t dsz = x.ap().element_bytes();
  // Live per element: x, exp and y, each double-buffered. exp is kept in the data dtype:
  // bf16 operands run VectorE at its 16-bit rate, and the row sum is taken of the rounded
  // values, so the normalisation stays consistent.
  const int64_t w = chunk > 0 ? std::min(chunk, cols) : chunk_width(cols, 2 * 3 * dsz, sbuf_budget(kb));
  const auto chunks = split(cols, w);
  const bool resident = chunks.size() == 1;

  TileRing xr(kb, Space::SBUF, {128, w}, dt, 2, "softmax.x");
  TileRing er(kb, Space::SBUF, {128, w}, dt, 2, "softmax.exp");
  TileRing yr(kb, Space::SBUF, {128, w}, dt, 2, "softmax.y");
  TileRing sr(kb, Space::SBUF, {128, kCols}, DType::F32, 2, "softmax.stats");

  for (const Span& rt : split(rows, 128)) {
    const int64_t p = rt.size;
    const Tile& st = sr.next();
    auto load_chunk = [&](const Span& c) {
      View t = corner(xr.next(), p, c.size);
      kb.load(t, x.slice({rt.range(), c.range()}));
      return t;
    };
    // exp(x - max) * (1 / sum) for one chunk, stored.
    auto finish_chunk = [&](const View& xt, const Span& c, const View& negmax) {
      View e = corner(er.next(), p, c.size);
      kb.activation(e, xt, ActFunc::Exp, 1.0f, negmax);
      View yt = corner(yr.next(), p, c.size);
      kb.tensor_scalar(yt, e, AluOp::Mul, col(st, p, kRecip));
      kb.store(y.slice({rt.range(), c.range()}), yt);
    };

    if (resident) {
      View xt = load_chunk(chunks[0]);
      kb.reduce(col(st, p, kNegMax), xt, AluOp::Max, 1, /*negate=*/true);
      View e = corner(er.next(), p, cols);
      View sum = col(st, p, kSum);
      kb.activation(e, xt, ActFunc::Exp, 1.0f, col(st, p, kNegMax), &sum);
      kb.tensor_scalar(col(st, p, kRecip), sum, AluOp::Div, 1.0f, AluOp::Bypass, 0.0f, /*reverse0=*/true);
      View yt = corner(yr.next(), p, cols);
      kb.tensor_scalar(yt, e, AluOp::Mul, col(st, p, kRecip));
      kb.store(y.slice({rt.range(), {0, cols}}), yt);
      continue;
    }

    // Pass 1: running max m and sum s; s is rescaled by exp(m_old - m_new) as m grows.
    kb.memset(col(st, p, kMax0), -std::numeric_limits<float>::infinity());
    kb.memset(col(st, p, kSum0), 0.0f);
    int cur = 0;
    for (const Span& c : chunks) {
      const int nxt = 1 - cur;
      View xt = load_chunk(c);
      View m = col(st, p, kMax0 + cur), s = col(st, p, kSum0 + cur);
      View mn = col(st, p, kMax0 + nxt), sn = col(st, p, kSum0 + nxt), negmn = col(st, p, kNegNew0 + nxt);
      kb.reduce(col(st, p, kChunkMax), xt, AluOp::Max);
      kb.tensor_tensor(mn, m, col(st, p, kChunkMax), AluOp::Max);
      kb.tensor_scalar(negmn, mn, AluOp::Mul, -1.0f);
      kb.activation(col(st, p, kAlpha), m, ActFunc::Exp, 1.0f, negmn);
      View e = corner(er.next(), p, c.size);
      View csum = col(st, p, kChunkSum);
      kb.activation(e, xt, ActFunc::Exp, 1.0f, negmn, &csum);
      kb.tensor_scalar(sn, s, AluOp::Mul, col(st, p, kAlpha), AluOp::Add, csum);
      cur = nxt;
    }
    kb.tensor_scalar(col(st, p, kRecip), col(st, p, kSum0 + cur), AluOp::Div, 1.0f, AluOp::Bypass, 0.0f, true);
    // Pass 2: reload each chunk, exp with the final max, scale by 1 / sum.
    for (const Span& c : chunks) finish_chunk(load_chunk(c), c, col(st, p, kNegNew0 + cur));
  }
}

KernelDef softmax_def() {
  KernelDef k;
  k.name = "softmax";
  k.description = "row-wise numerically stable softmax of x[rows, cols]";
  k.params = {rows_param(), cols_param(), chunk_param()};
  k.dtypes = {DType::BF16, DType::F32};
  k.build = [](const hw::ChipSpec& chip, const KernelArgs& a) {
    KernelBuilder kb(chip);
    kb.set_name(fmt::format("softmax_{}x{}_{}", a.i("rows"), a.i("cols"), numerics::name(a.dtype)));
    auto x = kb.hbm_input("x", {a.i("rows"), a.i("cols")}, a.dtype);
    auto y = kb.hbm_output("y", {a.i("rows"), a.i("cols")}, a.dtype);
    softmax(kb, x, y, a.i("chunk"));
    return kb.build();
  };
  k.reference = [](const KernelArgs& a, const Tensors& in) {
    const int64_t rows = a.i("rows"), cols = a.i("cols");
    const auto& x = in.at("x");
    std::vector<double> y(x.size());
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = &x[r * cols];
      double m = -INFINITY, s = 0;
      for (int64_t c = 0; c < cols; ++c) m = std::max(m, double(xr[c]));
      for (int64_t c = 0; c < cols; ++c) s += std::exp(double(xr[c]) - m);
      for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = std::exp(double(xr[c]) - m) / s;
    }
    return ReferenceOutputs{{"y", std::move(y)}};
  };
  // Outputs are in [0, 1]; fp32 carries ~1e-7 relative error per op through exp and a sum of
  // cols terms; bf16 rounds the result (2^-9 relative).
  k.tolerance = [](const KernelArgs& a) {
    return a.dtype == DType::F32 ? Tolerance{1e-7, 1e-5} : Tolerance{1e-4, 1e-2};
  };
  return k;
}

}  // namespace trnsim::kernels
