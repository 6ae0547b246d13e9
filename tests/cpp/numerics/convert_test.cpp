// fp32 <-> element formats, round to nearest even: exact codes for known values, per format.
// The exhaustive and random comparisons with ml_dtypes live in tests/python.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "trnsim/common/error.h"
#include "trnsim/numerics/convert.h"

namespace trnsim::numerics {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::bit_cast<float>(0x7FC00000u);
const float kNegNaN = std::bit_cast<float>(0xFFC00000u);
const ConvertOptions kSat{Rounding::NearestEven, Overflow::Saturate};

struct Known {
  DType t;
  uint32_t one, max_code, min_sub_code;
};
// 1.0, largest finite and smallest positive value of each format.
const Known kKnown[] = {
    {DType::F32, 0x3F800000, 0x7F7FFFFF, 0x00000001}, {DType::BF16, 0x3F80, 0x7F7F, 0x0001},
    {DType::F16, 0x3C00, 0x7BFF, 0x0001},             {DType::F8E4M3, 0x38, 0x7E, 0x01},
    {DType::F8E5M2, 0x3C, 0x7B, 0x01},                {DType::F8E3M4, 0x30, 0x6F, 0x01},
    {DType::F4E2M1, 0x2, 0x7, 0x1},                   {DType::E8M0, 0x7F, 0xFE, 0x00},
    {DType::I8, 0x01, 0x7F, 0x01},
};

TEST(Convert, OneMaxAndMinSubnormalInEveryFormat) {
  for (const auto& k : kKnown) {
    const auto& d = info(k.t);
    EXPECT_EQ(encode(1.0f, k.t), k.one) << d.name;
    EXPECT_EQ(decode(k.one, k.t), 1.0f) << d.name;
    EXPECT_EQ(encode(float(d.max_finite), k.t), k.max_code) << d.name;
    EXPECT_EQ(decode(k.max_code, k.t), float(d.max_finite)) << d.name;
    EXPECT_EQ(encode(float(d.min_subnormal), k.t), k.min_sub_code) << d.name;
    EXPECT_EQ(decode(k.min_sub_code, k.t), float(d.min_subnormal)) << d.name;
  }
}

TEST(Convert, OverflowByDefaultFollowsEachFormat) {
  EXPECT_EQ(encode(500.0f, DType::F8E4M3), 0x7Fu);   // no inf: NaN
  EXPECT_EQ(encode(-500.0f, DType::F8E4M3), 0xFFu);
  EXPECT_EQ(encode(464.0f, DType::F8E4M3), 0x7Eu);   // tie with 480 rounds to even 448
  EXPECT_EQ(encode(kInf, DType::F8E4M3), 0x7Fu);
  EXPECT_EQ(encode(61440.0f, DType::F8E5M2), 0x7Cu); // tie rounds up to inf
  EXPECT_EQ(encode(-kInf, DType::F8E5M2), 0xFCu);
  EXPECT_EQ(encode(15.75f, DType::F8E3M4), 0x70u);
  EXPECT_EQ(encode(65520.0f, DType::F16), 0x7C00u);
  EXPECT_EQ(encode(65519.0f, DType::F16), 0x7BFFu);
  EXPECT_EQ(encode(std::numeric_limits<float>::max(), DType::BF16), 0x7F80u);
  EXPECT_EQ(encode(100.0f, DType::F4E2M1), 0x7u);    // no inf, no NaN: saturates
  EXPECT_EQ(encode(-kInf, DType::F4E2M1), 0xFu);
  EXPECT_EQ(encode(0x1.8p127f, DType::E8M0), 0xFFu); // rounds past 2^127: NaN
  EXPECT_EQ(encode(1000.0f, DType::I8), 0x7Fu);
  EXPECT_EQ(encode(-1000.0f, DType::I8), 0x80u);
}

TEST(Convert, SaturateClampsOverflowAndInfinityButKeepsNaN) {
  EXPECT_EQ(encode(500.0f, DType::F8E4M3, kSat), 0x7Eu);
  EXPECT_EQ(encode(-kInf, DType::F8E4M3, kSat), 0xFEu);
  EXPECT_EQ(encode(kNaN, DType::F8E4M3, kSat), 0x7Fu);
  EXPECT_EQ(encode(kInf, DType::F8E5M2, kSat), 0x7Bu);
  EXPECT_EQ(encode(kInf, DType::F16, kSat), 0x7BFFu);
  EXPECT_EQ(encode(kInf, DType::BF16, kSat), 0x7F7Fu);
  EXPECT_EQ(encode(kInf, DType::F32, kSat), 0x7F7FFFFFu);
  EXPECT_EQ(encode(kInf, DType::E8M0, kSat), 0xFEu);
  EXPECT_EQ(encode(kNaN, DType::F8E5M2, kSat), 0x7Eu);
}

TEST(Convert, NaNCodesAreMlDtypes) {
  EXPECT_EQ(encode(kNaN, DType::BF16), 0x7FC0u);
  EXPECT_EQ(encode(kNegNaN, DType::BF16), 0xFFC0u);
  EXPECT_EQ(encode(std::bit_cast<float>(0x7F800001u), DType::F16), 0x7C01u);  // payload kept
  EXPECT_EQ(encode(std::bit_cast<float>(0xFF812345u), DType::F16), 0xFC09u);
  EXPECT_EQ(encode(kNegNaN, DType::F8E4M3), 0xFFu);
  EXPECT_EQ(encode(kNaN, DType::F8E5M2), 0x7Eu);
  EXPECT_EQ(encode(kNegNaN, DType::F8E3M4), 0xF8u);
  EXPECT_EQ(encode(kNaN, DType::F4E2M1), 0x8u);      // ml_dtypes: -(quiet_NaN = -0)
  EXPECT_EQ(encode(kNegNaN, DType::F4E2M1), 0x0u);
  EXPECT_EQ(encode(kNaN, DType::E8M0), 0xFFu);
  EXPECT_EQ(encode(kNaN, DType::I8), 0x00u);
  // E8M0 has no sign and no zero.
  EXPECT_EQ(encode(0.0f, DType::E8M0), 0xFFu);
  EXPECT_EQ(encode(-1.0f, DType::E8M0), 0xFFu);
}

TEST(Convert, RoundToNearestEvenTies) {
  EXPECT_EQ(encode(1.0625f, DType::F8E4M3), 0x38u);  // 1 + 1/16: tie -> 1.0 (even)
  EXPECT_EQ(encode(1.1875f, DType::F8E4M3), 0x3Au);  // tie between 1.125 and 1.25 -> 1.25
  EXPECT_EQ(encode(1.0f + 0x1p-8f, DType::BF16), 0x3F80u);
  EXPECT_EQ(encode(1.0f + 0x3p-8f, DType::BF16), 0x3F82u);
  EXPECT_EQ(encode(0x1p-10f, DType::F8E4M3), 0x00u);  // half the smallest subnormal -> 0
  EXPECT_EQ(encode(0x3p-10f, DType::F8E4M3), 0x02u);  // 1.5 subnormal steps -> 2
  EXPECT_EQ(encode(-0.25f, DType::F4E2M1), 0x8u);     // -0
  EXPECT_EQ(encode(2.5f, DType::I8), 2u);
  EXPECT_EQ(encode(3.5f, DType::I8), 4u);
  EXPECT_EQ(encode(-2.5f, DType::I8), 0xFEu);
  // E8M0 (ml_dtypes): ties round up.
  EXPECT_EQ(encode(1.5f, DType::E8M0), 0x80u);
  EXPECT_EQ(encode(3.0f, DType::E8M0), 0x81u);
}

TEST(Convert, DecodeSpecials) {
  EXPECT_EQ(decode(0x7C, DType::F8E5M2), kInf);
  EXPECT_EQ(std::bit_cast<uint32_t>(decode(0x7D, DType::F8E5M2)), 0x7FC00000u);
  EXPECT_EQ(std::bit_cast<uint32_t>(decode(0xFF, DType::F8E4M3)), 0xFFC00000u);
  EXPECT_EQ(std::bit_cast<uint32_t>(decode(0x7C01, DType::F16)), 0x7F802000u);
  EXPECT_EQ(decode(0x00, DType::E8M0), 0x1p-127f);
  EXPECT_TRUE(std::isnan(decode(0xFF, DType::E8M0)));
  EXPECT_EQ(decode(0x80, DType::I8), -128.0f);
  EXPECT_EQ(decode(0xF, DType::F4E2M1), -6.0f);
}

TEST(Convert, SpansAgreeWithScalars) {
  std::vector<float> x;
  for (int i = -2000; i <= 2000; ++i) x.push_back(std::ldexp(float(i) / 7.0f, i % 40 - 20));
  x.push_back(kNaN);
  x.push_back(-kInf);
  std::vector<uint8_t> c8(x.size());
  std::vector<uint16_t> c16(x.size());
  std::vector<float> back(x.size());
  for (DType t : {DType::F8E4M3, DType::F8E5M2, DType::F8E3M4, DType::F4E2M1, DType::E8M0,
                  DType::I8}) {
    encode(x, t, c8);
    decode(c8, t, back);
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(c8[i], encode(x[i], t)) << name(t) << " x=" << x[i];
      ASSERT_EQ(std::bit_cast<uint32_t>(back[i]), std::bit_cast<uint32_t>(decode(c8[i], t)));
    }
  }
  for (DType t : {DType::BF16, DType::F16}) {
    encode(x, t, c16, kSat);
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(c16[i], encode(x[i], t, kSat)) << name(t);
  }
}

TEST(Convert, QuantizeIsEncodeThenDecode) {
  std::vector<float> v = {0.1f, 1000.0f, -3.3f, 1e-9f};
  auto q = v;
  quantize(q, DType::BF16);
  for (size_t i = 0; i < v.size(); ++i)
    EXPECT_EQ(q[i], decode(encode(v[i], DType::BF16), DType::BF16));
  q = v;
  quantize(q, DType::F8E4M3, kSat);
  EXPECT_EQ(q[1], 448.0f);
}

TEST(Convert, BadCallsThrowTypedErrors) {
  std::vector<float> x(4, 1.0f);
  std::vector<uint8_t> c8(4);
  std::vector<uint16_t> c16(4);
  std::vector<uint8_t> short8(3);
  EXPECT_THROW(encode(x, DType::BF16, std::span<uint8_t>(c8)), ShapeError);   // wrong slot
  EXPECT_THROW(encode(x, DType::F8E4M3, std::span<uint16_t>(c16)), ShapeError);
  EXPECT_THROW(encode(x, DType::F8E4M3, std::span<uint8_t>(short8)), ShapeError);
  EXPECT_THROW(encode(1.0f, DType::MXFP4), UnsupportedError);
  EXPECT_THROW(encode(x, DType::MXFP8E4M3, std::span<uint8_t>(c8)), UnsupportedError);
  EXPECT_THROW(decode(0x100u, DType::F8E4M3), ShapeError);
  EXPECT_THROW(encode(1.0f, static_cast<DType>(200)), UnsupportedError);
}

}  // namespace
}  // namespace trnsim::numerics
