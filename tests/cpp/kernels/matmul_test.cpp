// Library matmul kernels, functional mode, against a double-precision reference.
// Tolerances: inputs are rounded to the operand dtype first (the reference uses the same
// rounded inputs), products accumulate in fp32 in PSUM, and the result is rounded once to its
// dtype: bf16 output -> relative 2^-8 of the row's magnitude scale plus fp32 accumulation error;
// fp32 output -> 1e-5 relative. fp8 inputs are held to the same bound on their rounded values.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/core/run.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/kernels/matmul.h"
#include "trnsim/numerics/convert.h"

using namespace trnsim;
using namespace trnsim::kernels;

namespace {

struct Case {
  int64_t m, k, n;
  DType in, out;
  MatmulVariant variant;
};

std::string case_name(const testing::TestParamInfo<Case>& i) {
  const Case& c = i.param;
  return fmt::format("{}_{}x{}x{}_{}_to_{}", c.variant == MatmulVariant::Naive ? "naive" : "optimized", c.m, c.k,
                     c.n, numerics::name(c.in), numerics::name(c.out));
}

class MatmulKernel : public testing::TestWithParam<Case> {};

TEST_P(MatmulKernel, MatchesDoublePrecisionReference) {
  const Case c = GetParam();
  hw::ChipSpec chip = hw::load_chip("trn1");
  MatmulBlocking bl{4, 2, 2, 2};  // small blocks so the test shapes exercise several of them
  isa::Program p = matmul_program(chip, {c.m, c.k, c.n, c.in, c.out}, c.variant, bl);
  std::mt19937 rng(42);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> a(c.k * c.m), b(c.k * c.n);
  for (auto& x : a) x = nd(rng);
  for (auto& x : b) x = nd(rng);
  auto r = core::run(p, chip, {{"lhsT", a}, {"rhs", b}});
  // Reference on the values as the kernel sees them (rounded to the input dtype).
  numerics::quantize(a, c.in);
  numerics::quantize(b, c.in);
  const auto& out = r.outputs.at("result");
  ASSERT_EQ(out.size(), static_cast<size_t>(c.m * c.n));
  const double rel = c.out == DType::F32 ? 1e-5 : std::ldexp(1.0, -8);
  double worst = 0;
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      double ref = 0, mag = 0;
      for (int64_t q = 0; q < c.k; ++q) {
        double t = double(a[q * c.m + i]) * b[q * c.n + j];
        ref += t;
        mag += std::fabs(t);
      }
      double err = std::fabs(out[i * c.n + j] - ref);
      double tol = rel * std::fabs(ref) + 1e-6 * mag + 1e-30;
      worst = std::max(worst, err / tol);
      ASSERT_LE(err, tol) << "result[" << i << ", " << j << "] = " << out[i * c.n + j] << " vs " << ref;
    }
  EXPECT_GT(r.total_ms(), 0.0);
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, MatmulKernel,
    testing::Values(Case{256, 256, 1024, DType::BF16, DType::BF16, MatmulVariant::Optimized},
                    Case{512, 384, 1024, DType::BF16, DType::F32, MatmulVariant::Optimized},
                    Case{256, 256, 512, DType::F32, DType::F32, MatmulVariant::Optimized},
                    Case{256, 256, 512, DType::F8E4M3, DType::BF16, MatmulVariant::Optimized},
                    Case{256, 256, 512, DType::F16, DType::F32, MatmulVariant::Optimized},
                    Case{128, 256, 256, DType::BF16, DType::BF16, MatmulVariant::Naive},
                    Case{256, 128, 1024, DType::F32, DType::F32, MatmulVariant::Naive}),
    case_name);

TEST(MatmulKernelShapes, RejectsShapesThatDoNotTile) {
  hw::ChipSpec chip = hw::load_chip("trn1");
  EXPECT_THROW(matmul_program(chip, {100, 128, 512, DType::BF16, DType::BF16}, MatmulVariant::Optimized), ShapeError);
  EXPECT_THROW(matmul_program(chip, {128, 128, 700, DType::BF16, DType::BF16}, MatmulVariant::Naive), ShapeError);
}

TEST(MatmulKernelShapes, SmallShapesAreFarFromPeak) {
  // 512^3 on trn1: fixed DMA latency and pipeline fill dominate.
  hw::ChipSpec chip = hw::load_chip("trn1");
  isa::Program p = matmul_program(chip, {512, 512, 512, DType::BF16, DType::BF16}, MatmulVariant::Optimized);
  core::RunOptions o;
  o.mode = core::Mode::Timing;
  auto r = core::run(p, chip, {}, o);
  double peak = 128.0 * 128 * 2 * chip.core.tensor.clock.value() * 1e9;  // FLOP/s
  double util = 2.0 * 512 * 512 * 512 / (r.total.ns() * 1e-9) / peak;
  std::printf("512^3 bf16: %.2f us, %.1f%% of TensorE peak\n", r.total.us(), 100 * util);
  EXPECT_LT(util, 0.35);
}

TEST(MatmulOperandCache, RewrittenOperandTileIsDecodedAgain) {
  // TensorE keeps decoded bf16 operand tiles while their bytes are unwritten; here the same
  // moving tile (same address and pattern) is reloaded with new values before every matmul and
  // the stationary is reused. Small integers keep every sum exact, so results compare exactly.
  hw::ChipSpec chip = hw::load_chip("trn1");
  KernelBuilder kb(chip);
  const int R = 3;
  auto w = kb.hbm_input("w", {128, 128}, DType::BF16);
  auto x = kb.hbm_input("x", {R * 128, 512}, DType::BF16);
  auto y = kb.hbm_output("y", {R * 128, 512}, DType::F32);
  Tile wt = kb.sbuf_tile({128, 128}, DType::BF16);
  Tile xt = kb.sbuf_tile({128, 512}, DType::BF16);
  Tile acc = kb.psum_tile({128, 512});
  Tile res = kb.sbuf_tile({128, 512}, DType::F32);
  kb.load(wt, w);
  for (int i = 0; i < R; ++i) {
    kb.load(xt, x.slice({{i * 128, (i + 1) * 128}, {0, 512}}));
    kb.matmul(acc, wt, xt);
    kb.copy(res, acc);
    kb.store(y.slice({{i * 128, (i + 1) * 128}, {0, 512}}), res);
  }
  isa::Program p = kb.build();
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> u(-4, 4);
  std::vector<float> wv(128 * 128), xv(R * 128 * 512);
  for (auto& v : wv) v = static_cast<float>(u(rng));
  for (auto& v : xv) v = static_cast<float>(u(rng));
  auto r = core::run(p, chip, {{"w", wv}, {"x", xv}});
  const auto& out = r.outputs.at("y");
  int64_t wrong = 0;
  for (int i = 0; i < R; ++i)
    for (int m = 0; m < 128; ++m)
      for (int n = 0; n < 512; ++n) {
        float ref = 0;
        for (int k = 0; k < 128; ++k) ref += wv[k * 128 + m] * xv[(i * 128 + k) * 512 + n];
        wrong += out[(i * 128 + m) * 512 + n] != ref;
      }
  EXPECT_EQ(wrong, 0);
}
}  // namespace
