// The AVX2 builds of the conversion loops must give the same bits as the baseline builds (which
// is what runs on CPUs without AVX2). Skipped where the CPU has no AVX2. (A one-off run over all
// 2^32 fp32 inputs found no difference either.)
#include <gtest/gtest.h>

#include <bit>
#include <random>
#include <vector>

#include "trnsim/numerics/convert.h"
#include "trnsim/numerics/simd_dispatch.h"

namespace trnsim::numerics {
namespace {

std::vector<float> inputs() {
  std::mt19937 rng(99);
  std::vector<float> x;
  for (int i = 0; i < 1 << 20; ++i) x.push_back(std::bit_cast<float>(uint32_t(rng())));
  // Every pattern within 2^16 ulps of 1.0 and of each format's smallest normal.
  for (uint32_t c : {0x3F800000u, 0x3C800000u, 0x38800000u, 0x3E800000u, 0x00800000u})
    for (uint32_t d = 0; d < (1u << 16); ++d) x.push_back(std::bit_cast<float>(c - (1u << 15) + d));
  return x;
}

template <class Bits>
void expect_same(const std::vector<float>& x, DType t, Overflow o) {
  std::vector<Bits> base(x.size()), fast(x.size());
  const ConvertOptions opt{Rounding::NearestEven, o};
  detail::allow_avx2(false);
  encode(x, t, std::span<Bits>(base), opt);
  detail::allow_avx2(true);
  encode(x, t, std::span<Bits>(fast), opt);
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(base[i], fast[i]) << name(t) << " x bits " << std::bit_cast<uint32_t>(x[i]);
}

TEST(SimdDispatch, Avx2LoopsMatchBaselineLoops) {
  detail::allow_avx2(true);
  if (!detail::use_avx2()) GTEST_SKIP() << "no AVX2 on this CPU";
  const auto x = inputs();
  for (Overflow o : {Overflow::Default, Overflow::Saturate}) {
    expect_same<uint32_t>(x, DType::F32, o);
    for (DType t : {DType::BF16, DType::F16}) expect_same<uint16_t>(x, t, o);
    for (DType t : {DType::F8E4M3, DType::F8E5M2, DType::F8E3M4, DType::F4E2M1, DType::E8M0,
                    DType::I8})
      expect_same<uint8_t>(x, t, o);
  }
}

TEST(SimdDispatch, Avx2DecodeMatchesBaselineForEvery16BitCode) {
  detail::allow_avx2(true);
  if (!detail::use_avx2()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::vector<uint16_t> codes(1 << 16);
  for (uint32_t c = 0; c < codes.size(); ++c) codes[c] = static_cast<uint16_t>(c);
  std::vector<float> base(codes.size()), fast(codes.size());
  for (DType t : {DType::BF16, DType::F16}) {
    detail::allow_avx2(false);
    decode(codes, t, base);
    detail::allow_avx2(true);
    decode(codes, t, fast);
    for (size_t i = 0; i < codes.size(); ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(base[i]), std::bit_cast<uint32_t>(fast[i])) << name(t) << i;
  }
}

}  // namespace
}  // namespace trnsim::numerics
