// The library matmul kernels (see matmul.h), after the NKI matmul tutorial.
#include "trnsim/kernels/matmul.h"

#include <algorithm>

#include <fmt/format.h>

#include "trnsim/common/error.h"

namespace trnsim::kernels {

namespace {
constexpr int64_t kTileK = 128, kTileM = 128;

int64_t tile_n_for(int64_t n) { return std::min<int64_t>(512, n); }

void check_shapes(const Tensor& lhsT, const Tensor& rhs, const Tensor& result) {
  const auto &a = lhsT.shape(), &b = rhs.shape(), &c = result.shape();
  if (a.size() != 2 || b.size() != 2 || c.size() != 2)
    throw ShapeError("matmul: lhsT, rhs and result must be 2-D");
  if (a[0] != b[0])
    throw ShapeError(fmt::format("matmul: lhsT is [K={}, M] but rhs is [K={}, N]", a[0], b[0]));
  if (c[0] != a[1] || c[1] != b[1])
    throw ShapeError(fmt::format("matmul: result is [{}, {}], expected [M={}, N={}]", c[0], c[1], a[1], b[1]));
  const int64_t K = a[0], M = a[1], N = b[1];
  if (K % kTileK || M % kTileM)
    throw ShapeError(fmt::format("matmul: K={} and M={} must be multiples of 128", K, M));
  if (N % tile_n_for(N))
    throw ShapeError(fmt::format("matmul: N={} must be a multiple of 512 (or at most 512)", N));
}

// Largest divisor of `count` that is <= want.
int fit(int64_t count, int want) {
  int v = std::max(1, std::min<int>(want, static_cast<int>(count)));
  while (count % v) --v;
  return v;
}

// The matmul instructions alone (one per 128 x 128 x TN tile): checked against the builder's
// budget before any is emitted, so a huge matmul is refused at once with its estimate.
void expect_tiles(KernelBuilder& kb, int64_t M, int64_t N, int64_t K, int64_t TN) {
  const double tiles = static_cast<double>(M / kTileM) * static_cast<double>((N + TN - 1) / TN) * static_cast<double>(K / kTileK);
  kb.expect_instructions(tiles < 9e18 ? static_cast<int64_t>(tiles) : INT64_MAX);
}

}  // namespace

void matmul_naive(KernelBuilder& kb, const Tensor& lhsT, const Tensor& rhs, const Tensor& result) {
  check_shapes(lhsT, rhs, result);
  const int64_t K = lhsT.shape()[0], M = lhsT.shape()[1], N = rhs.shape()[1];
  const int64_t TN = tile_n_for(N);
  expect_tiles(kb, M, N, K, TN);
  // One buffer per operand: each load waits for the matmul that read the previous tile.
  TileScope scope(kb);
  Tile lt = scope.sbuf({kTileK, kTileM}, lhsT.dtype(), "lhsT_tile");
  Tile rt = scope.sbuf({kTileK, TN}, rhs.dtype(), "rhs_tile");
  Tile acc = scope.psum({kTileM, TN}, DType::F32, "res_psum");
  Tile res = scope.sbuf({kTileM, TN}, result.dtype(), "res_sb");
  for (int64_t m = 0; m < M; m += kTileM)
    for (int64_t n = 0; n < N; n += TN) {
      for (int64_t k = 0; k < K; k += kTileK) {
        kb.load(lt, lhsT.slice({{k, k + kTileK}, {m, m + kTileM}}));
        kb.load(rt, rhs.slice({{k, k + kTileK}, {n, n + TN}}));
        kb.matmul(acc, lt, rt, k == 0, k + kTileK == K);
      }
      kb.copy(res, acc);
      kb.store(result.slice({{m, m + kTileM}, {n, n + TN}}), res);
    }
}

void matmul_optimized(KernelBuilder& kb, const Tensor& lhsT, const Tensor& rhs, const Tensor& result,
                      MatmulBlocking bl) {
  check_shapes(lhsT, rhs, result);
  const int64_t K = lhsT.shape()[0], M = lhsT.shape()[1], N = rhs.shape()[1];
  const int64_t TN = tile_n_for(N);
  expect_tiles(kb, M, N, K, TN);
  const int tm = fit(M / kTileM, bl.tiles_m), tn = fit(N / TN, bl.tiles_n), tk = fit(K / kTileK, bl.tiles_k);
  const int64_t BM = kTileM * tm, BN = TN * tn, BK = kTileK * tk;
  const int depth = std::max(1, bl.buffers);
  // Operand blocks: tk K-tiles side by side on the free axis, one DMA per K-tile row block
  // (BM or BN wide), double-buffered so the next block loads while TensorE works.
  TileRing lhs_ring(kb, Space::SBUF, {kTileK, tk * BM}, lhsT.dtype(), depth, "lhsT_block");
  TileRing rhs_ring(kb, Space::SBUF, {kTileK, tk * BN}, rhs.dtype(), depth, "rhs_block");
  // Result block [BM, BN] as tm rows of [128, BN]: each row is stored with one wide DMA.
  TileRing res_ring(kb, Space::SBUF, {kTileM, tm * BN}, result.dtype(), 2, "result_block");
  // PSUM accumulators rotate over the banks so TensorE never waits for VectorE.
  TileRing psum_ring(kb, Space::PSUM, {kTileM, TN}, DType::F32, 4, "psum_tile");
  for (int64_t m2 = 0; m2 < M; m2 += BM)
    for (int64_t n2 = 0; n2 < N; n2 += BN) {
      const Tile& res = res_ring.next();
      for (int64_t k2 = 0; k2 < K; k2 += BK) {
        const Tile& lb = lhs_ring.next();
        const Tile& rb = rhs_ring.next();
        for (int bk = 0; bk < tk; ++bk) {
          const int64_t k = k2 + bk * kTileK;
          kb.load(lb.slice({{0, kTileK}, {bk * BM, (bk + 1) * BM}}), lhsT.slice({{k, k + kTileK}, {m2, m2 + BM}}));
          kb.load(rb.slice({{0, kTileK}, {bk * BN, (bk + 1) * BN}}), rhs.slice({{k, k + kTileK}, {n2, n2 + BN}}));
        }
        for (int bn = 0; bn < tn; ++bn)
          for (int bm = 0; bm < tm; ++bm) {
            const Tile& acc = psum_ring.next();
            for (int bk = 0; bk < tk; ++bk)
              kb.matmul(acc, lb.slice({{0, kTileK}, {bk * BM + bm * kTileM, bk * BM + (bm + 1) * kTileM}}),
                        rb.slice({{0, kTileK}, {bk * BN + bn * TN, bk * BN + (bn + 1) * TN}}), bk == 0, bk == tk - 1);
            View dst = res.slice({{0, kTileM}, {bm * BN + bn * TN, bm * BN + (bn + 1) * TN}});
            if (k2 == 0) kb.copy(dst, acc);
            else kb.tensor_tensor(dst, acc, dst, AluOp::Add);
          }
      }
      for (int bm = 0; bm < tm; ++bm)
        kb.store(result.slice({{m2 + bm * kTileM, m2 + (bm + 1) * kTileM}, {n2, n2 + BN}}),
                 res.slice({{0, kTileM}, {bm * BN, (bm + 1) * BN}}));
    }
}

isa::Program matmul_program(const hw::ChipSpec& chip, const MatmulShape& s, MatmulVariant variant,
                            MatmulBlocking bl) {
  KernelBuilder kb(chip);
  kb.set_name(fmt::format("matmul_{}_{}x{}x{}_{}", variant == MatmulVariant::Naive ? "naive" : "optimized",
                          s.m, s.k, s.n, numerics::name(s.in)));
  Tensor lhsT = kb.hbm_input("lhsT", {s.k, s.m}, s.in);
  Tensor rhs = kb.hbm_input("rhs", {s.k, s.n}, s.in);
  Tensor result = kb.hbm_output("result", {s.m, s.n}, s.out);
  if (variant == MatmulVariant::Naive) {
    matmul_naive(kb, lhsT, rhs, result);
  } else {
    // Shrink the blocking until the rings fit in SBUF (fp32 operands need half the tiles).
    auto bytes = [&](const MatmulBlocking& b) {
      int ib = numerics::info(s.in).bits / 8, ob = numerics::info(s.out).bits / 8;
      int64_t tn = std::min<int64_t>(512, s.n);
      return b.buffers * b.tiles_k * (kTileM * b.tiles_m + tn * b.tiles_n) * ib + 2 * b.tiles_m * tn * b.tiles_n * ob;
    };
    const auto cap = static_cast<int64_t>(chip.core.sbuf.bytes_per_partition.value());
    while (bytes(bl) > cap) {
      if (bl.tiles_m > 1) bl.tiles_m /= 2;
      else if (bl.tiles_k > 1) bl.tiles_k /= 2;
      else if (bl.buffers > 1) --bl.buffers;
      else break;
    }
    matmul_optimized(kb, lhsT, rhs, result, bl);
  }
  return kb.build();
}

}  // namespace trnsim::kernels
