// OCP MX block quantisation on hand-worked blocks.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "trnsim/common/error.h"
#include "trnsim/numerics/convert.h"

namespace trnsim::numerics {
namespace {

std::vector<float> block(std::initializer_list<float> head, size_t n = 32) {
  std::vector<float> x(head);
  x.resize(n, 0.0f);
  return x;
}

TEST(MX, Fp8E4M3HandExample) {
  // amax 6: floor(log2 6) = 2, emax(E4M3) = 8 -> scale 2^-6 (E8M0 121); elements x * 64.
  auto x = block({6.0f, 1.0f, -0.5f});
  std::vector<uint8_t> e(32), s(1);
  mx_quantize(x, DType::MXFP8E4M3, e, s);
  EXPECT_EQ(s[0], 121);
  EXPECT_EQ(e[0], 0x7C);  // 384 = 1.5 * 2^8
  EXPECT_EQ(e[1], 0x68);  // 64 = 2^6
  EXPECT_EQ(e[2], 0xE0);  // -32
  EXPECT_EQ(e[3], 0x00);
  std::vector<float> back(32);
  mx_dequantize(e, s, DType::MXFP8E4M3, back);
  EXPECT_EQ(back, x);
}

TEST(MX, Fp4SaturatesAtSixAndRoundsToNearestEven) {
  // amax 7.9: floor(log2) = 2 = emax(E2M1) -> scale 1; 7.9 saturates to 6, 2.5 ties to 2.
  auto x = block({7.9f, 2.5f, -0.75f, 0.2f});
  std::vector<uint8_t> e(32), s(1);
  mx_quantize(x, DType::MXFP4, e, s);
  EXPECT_EQ(s[0], 127);
  EXPECT_EQ(e[0], 0x7);
  EXPECT_EQ(e[1], 0x4);   // 2.0
  EXPECT_EQ(e[2], 0xA);   // -0.75 ties to -1.0 (even mantissa)
  EXPECT_EQ(e[3], 0x0);   // 0.2 -> 0
}

TEST(MX, ZeroBlockGetsSmallestScaleAndNaNBlockTheNaNScale) {
  std::vector<float> x(64, 0.0f);
  x[40] = NAN;
  std::vector<uint8_t> e(64, 0x55), s(2);
  mx_quantize(x, DType::MXFP8E5M2, e, s);
  EXPECT_EQ(s[0], 0);
  EXPECT_EQ(s[1], 0xFF);
  for (int i = 32; i < 64; ++i) EXPECT_EQ(e[i], 0);
  std::vector<float> back(64);
  mx_dequantize(e, s, DType::MXFP8E5M2, back);
  EXPECT_EQ(back[0], 0.0f);
  for (int i = 32; i < 64; ++i) EXPECT_TRUE(std::isnan(back[i]));
}

TEST(MX, ShortLastBlockAndQuantizeInPlace) {
  std::vector<float> x(40);
  for (int i = 0; i < 40; ++i) x[i] = (i < 32 ? 100.0f : 0.01f) * (1.0f + i / 64.0f);
  std::vector<uint8_t> e(40), s(2);
  mx_quantize(x, DType::MXFP4, e, s);
  std::vector<float> back(40);
  mx_dequantize(e, s, DType::MXFP4, back);
  auto q = x;
  quantize(q, DType::MXFP4);
  EXPECT_EQ(q, back);
  // Second block scaled on its own: 0.01.. -> scale 2^(floor(log2 0.0161) - 2) = 2^-8.
  EXPECT_EQ(s[1], 127 - 8);
}

TEST(MX, BadCallsThrow) {
  std::vector<float> x(33);
  std::vector<uint8_t> e(33), s1(1), s2(2);
  EXPECT_THROW(mx_quantize(x, DType::MXFP4, e, s1), ShapeError);
  EXPECT_THROW(mx_quantize(x, DType::F8E4M3, e, s2), UnsupportedError);
  std::vector<float> out(32);
  EXPECT_THROW(mx_dequantize(e, s2, DType::MXFP4, out), ShapeError);
}

}  // namespace
}  // namespace trnsim::numerics
