// Stochastic rounding: reproducible per seed, independent of chunking, lands on the two grid
// neighbours, and is unbiased (statistical bound; the 10^6-sample check is in tests/python).
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "trnsim/numerics/convert.h"

namespace trnsim::numerics {
namespace {

ConvertOptions sr(uint64_t seed, uint64_t offset = 0) {
  return ConvertOptions{Rounding::Stochastic, Overflow::Default, seed, offset};
}

std::vector<float> ramp(size_t n) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = 0.37f * float(i % 97) - 11.0f + 1e-3f * float(i);
  return x;
}

TEST(Stochastic, SameSeedSameCodesOtherSeedOtherCodes) {
  auto x = ramp(4096);
  std::vector<uint8_t> a(x.size()), b(x.size()), c(x.size());
  encode(x, DType::F8E4M3, a, sr(42));
  encode(x, DType::F8E4M3, b, sr(42));
  encode(x, DType::F8E4M3, c, sr(43));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(Stochastic, IndependentOfHowTheArrayIsSplit) {
  auto x = ramp(3000);
  std::vector<uint16_t> whole(x.size()), parts(x.size());
  encode(x, DType::BF16, whole, sr(7));
  const size_t cuts[] = {0, 1, 513, 1700, 3000};
  for (int k = 0; k + 1 < 5; ++k) {
    const size_t lo = cuts[k], n = cuts[k + 1] - lo;
    encode(std::span<const float>(x).subspan(lo, n), DType::BF16,
           std::span<uint16_t>(parts).subspan(lo, n), sr(7, lo));
  }
  EXPECT_EQ(whole, parts);
  for (size_t i = 0; i < x.size(); i += 37)
    EXPECT_EQ(whole[i], encode(x[i], DType::BF16, sr(7), i));
}

TEST(Stochastic, OnlyTheTwoNeighboursAndExactValuesStay) {
  // 1 + 0.3 ulp in E4M3 (ulp 1/8 at 1.0): 1.0 or 1.125 only, mostly 1.0.
  const float x = 1.0f + 0.3f / 8.0f;
  int up = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const uint32_t c = encode(x, DType::F8E4M3, sr(1), i);
    ASSERT_TRUE(c == 0x38 || c == 0x39) << c;
    up += c == 0x39;
  }
  // Binomial(n, 0.3): 4 standard deviations.
  EXPECT_NEAR(double(up) / n, 0.3, 4 * std::sqrt(0.3 * 0.7 / n));
  for (int i = 0; i < 100; ++i) EXPECT_EQ(encode(1.125f, DType::F8E4M3, sr(1), i), 0x39u);
}

TEST(Stochastic, UnbiasedInSubnormalRangeAndForInt8) {
  struct Case { DType t; float x; };
  for (auto [t, x] : {Case{DType::F8E4M3, 2.6f * 0x1p-9f}, Case{DType::F16, -0x1.4p-20f},
                      Case{DType::I8, -2.7f}, Case{DType::BF16, 1e-39f},
                      Case{DType::F4E2M1, 2.2f}}) {
    const int n = 100000;
    double sum = 0, sum2 = 0;
    for (int i = 0; i < n; ++i) {
      const double e = double(decode(encode(x, t, sr(9), i), t)) - x;
      sum += e;
      sum2 += e * e;
    }
    const double mean = sum / n, se = std::sqrt((sum2 / n - mean * mean) / n);
    EXPECT_LT(std::fabs(mean), 4 * se + 1e-12 * std::fabs(x)) << name(t) << " x=" << x;
  }
}

TEST(Stochastic, SpecialsPassThrough) {
  const float inf = INFINITY;
  EXPECT_EQ(encode(inf, DType::F8E5M2, sr(3)), 0x7Cu);
  EXPECT_EQ(encode(NAN, DType::F8E5M2, sr(3)), 0x7Eu);
  EXPECT_EQ(encode(0.0f, DType::F8E5M2, sr(3)), 0x00u);
  EXPECT_EQ(encode(-0.0f, DType::F8E5M2, sr(3)), 0x80u);
  EXPECT_EQ(encode(1e30f, DType::F8E4M3, ConvertOptions{Rounding::Stochastic, Overflow::Saturate}),
            0x7Eu);
}

}  // namespace
}  // namespace trnsim::numerics
