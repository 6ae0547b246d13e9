// Scalar kernels fp32 <-> one element format, round to nearest even. They are branch-free
// (every path is computed and one is selected), so a loop over them auto-vectorises; the span
// functions in convert.cpp are such loops.
#pragma once
#include <array>
#include <bit>
#include <cstdint>

#include "trnsim/numerics/dtype.h"
#include "trnsim/numerics/float_format.h"

namespace trnsim::numerics::detail {

inline uint32_t f2u(float f) { return std::bit_cast<uint32_t>(f); }
inline float u2f(uint32_t u) { return std::bit_cast<float>(u); }
// c ? a : b as bit masks. With a ternary GCC sinks the float op of the unused side into a
// branch (it may trap, under -ftrapping-math) and then refuses to vectorise the loop.
inline uint32_t select(bool c, uint32_t a, uint32_t b) {
  const uint32_t m = 0u - uint32_t(c);
  return (a & m) | (b & ~m);
}

// fp32 -> small float. kSaturate clamps overflow and infinities to the largest finite value.
template <const FloatFormat& F, bool kSaturate>
inline uint32_t encode_float(float x) {
  constexpr int S = F.shift();
  const uint32_t u = f2u(x);
  const uint32_t a = u & 0x7FFFFFFFu;
  const uint32_t sign = (u >> 31) << (F.bits() - 1);
  // Normal results: bias-add RNE on the fp32 pattern at bit S, then re-bias the exponent.
  uint32_t r = ((a + ((1u << (S - 1)) - 1) + ((a >> S) & 1u)) >> S) -
               (uint32_t(127 - F.bias) << F.man_bits);
  if constexpr (F.bias != 127) {  // bf16 has fp32's exponent range: the line above is exact
    // Subnormal results: the FPU itself rounds |x| + magic to the subnormal step.
    const uint32_t sub = f2u(u2f(a) + u2f(F.subnormal_magic_bits())) - F.subnormal_magic_bits();
    r = select(a < F.min_normal_bits(), sub, r);
  }
  // bf16 needs no overflow select by default: rounding past the max carries into inf.
  if constexpr (kSaturate || F.bias != 127)
    r = select(r > F.max_code, kSaturate ? F.max_code : F.ovf_code, r);
  uint32_t nan = F.nan_code;
  if constexpr (F.nan_payload) {
    const uint32_t p = (a & 0x7FFFFFu) >> S;
    nan |= p | uint32_t(p == 0);
  }
  return select(a > 0x7F800000u, nan ^ sign, r | sign);
}

// fp32 -> E8M0 (ml_dtypes float8_e8m0fnu): no sign and no zero, so negatives, zeros and NaN
// give NaN (0xFF). ml_dtypes rounds ties up (1.5 -> 2, 3 -> 4), and an fp32 subnormal goes to
// 2^-127 up to and including 2^-127 itself, above it to 2^-126.
template <bool kSaturate>
inline uint32_t encode_e8m0(float x) {
  const uint32_t u = f2u(x);
  const uint32_t a = u & 0x7FFFFFFFu;
  const uint32_t e = a >> 23, m = a & 0x7FFFFFu;
  uint32_t r = e + uint32_t(m >= 0x400000u);
  r = e == 0 ? uint32_t(m > 0x400000u) : r;
  r = r > 254 ? (kSaturate ? 254u : 255u) : r;
  return (u >= 0x80000000u) | (a == 0) | (a > 0x7F800000u) ? 255u : r;
}

// fp32 -> int8: round half to even, saturate to [-128, 127], NaN -> 0.
inline uint32_t encode_i8(float x) {
  // Clamp first (NaN fails both compares and is zeroed below), then add and remove 1.5 * 2^23,
  // which leaves the FPU's round-to-nearest-even integer.
  uint32_t c = f2u(x);
  c = select(x < -128.0f, f2u(-128.0f), c);
  c = select(x > 127.0f, f2u(127.0f), c);
  c = select(x != x, 0u, c);
  const float y = (u2f(c) + 12582912.0f) - 12582912.0f;
  return uint32_t(int32_t(y)) & 0xFFu;
}

// fp32 -> fp32 (identity, or clamp infinities to +-FLT_MAX when saturating).
template <bool kSaturate>
inline uint32_t encode_f32(float x) {
  const uint32_t u = f2u(x);
  if constexpr (kSaturate) return (u & 0x7FFFFFFFu) == 0x7F800000u ? u - 1 : u;
  return u;
}

// Small float -> fp32 bit pattern, exact; constexpr so the 8-bit decode tables are built at
// compile time.
constexpr uint32_t decode_float_bits(const FloatFormat& F, uint32_t c) {
  const uint32_t sign = (c & F.sign_bit()) ? 0x80000000u : 0u;
  const uint32_t mag = c & (F.sign_bit() - 1);
  const uint32_t m = mag & ((1u << F.man_bits) - 1);
  const uint32_t e = mag >> F.man_bits;
  if (mag > F.max_code) {
    const bool inf = mag == F.ovf_code && F.ovf_code != F.nan_code;
    if (inf) return sign | 0x7F800000u;
    return sign | (F.nan_canonical_on_decode ? 0x7FC00000u : 0x7F800000u | (m << F.shift()));
  }
  if (e > 0) return sign | (uint32_t(int(e) - F.bias + 127) << 23) | (m << F.shift());
  if (m == 0) return sign;
  int k = 31 - std::countl_zero(m);  // leading bit of the subnormal mantissa
  return sign | (uint32_t(k + 1 - F.bias - F.man_bits + 127) << 23) |
         ((m - (1u << k)) << (23 - k));
}

constexpr uint32_t decode_e8m0_bits(uint32_t c) {
  return c == 255 ? 0x7FC00000u : c == 0 ? 0x00400000u : c << 23;
}

// fp16 -> fp32, branch-free; NaN payloads are kept, as numpy does.
inline float decode_f16(uint32_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t mag = h & 0x7FFFu;
  uint32_t r = select(mag >= 0x7C00u, (mag << 13) | 0x7F800000u, (mag << 13) + (112u << 23));
  r = select(mag < 0x400u, f2u(float(mag) * 0x1p-24f), r);  // subnormal: exact product
  return u2f(r | sign);
}

// 256-entry fp32 table for a one-byte element format (fp4 repeats its 16 values, so the high
// nibble is ignored); nullptr for the other formats. Defined in decode_tables.cpp.
const std::array<float, 256>* decode_table(DType t);

}  // namespace trnsim::numerics::detail
