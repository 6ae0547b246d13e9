// Compile-time bit layouts of the small float formats, and the special-value rules each one
// follows when converting from fp32. The rules are ml_dtypes 0.6.0's (numpy's for fp16): the
// acceptance test compares with it bit for bit, so every quirk below is deliberate.
#pragma once
#include <cstdint>

namespace trnsim::numerics::detail {

struct FloatFormat {
  int exp_bits;
  int man_bits;
  int bias;
  uint32_t max_code;  // magnitude code of the largest finite value
  uint32_t ovf_code;  // magnitude code an overflow or infinity becomes by default
  uint32_t nan_code;  // code of +NaN; -NaN is nan_code ^ sign bit (see kF4E2M1)
  bool nan_payload;   // fp16: keep the top mantissa bits of a NaN (numpy), not a canonical NaN
  bool nan_canonical_on_decode;  // fp8: a NaN decodes to the canonical fp32 qNaN (ml_dtypes)

  constexpr int bits() const { return 1 + exp_bits + man_bits; }
  constexpr uint32_t sign_bit() const { return 1u << (exp_bits + man_bits); }
  constexpr int shift() const { return 23 - man_bits; }  // fp32 mantissa bits dropped
  // fp32 bit pattern of the smallest normal, 2^(1-bias).
  constexpr uint32_t min_normal_bits() const { return uint32_t(128 - bias) << 23; }
  // A float whose ulp is this format's subnormal step 2^(1-bias-man_bits): adding it to a
  // smaller magnitude makes the FPU round to that step (the "magic number" trick).
  constexpr uint32_t subnormal_magic_bits() const { return uint32_t(151 - bias - man_bits) << 23; }
  // log2 of the subnormal step.
  constexpr int quantum_exp() const { return 1 - bias - man_bits; }
};

// bf16 (Eigen): NaN -> sign | 0x7FC0; overflow -> inf.
inline constexpr FloatFormat kBF16{8, 7, 127, 0x7F7F, 0x7F80, 0x7FC0, false, false};
// fp16 (numpy): NaN keeps sign and the top 10 payload bits (forced non-zero); overflow -> inf.
inline constexpr FloatFormat kF16{5, 10, 15, 0x7BFF, 0x7C00, 0x7C00, true, false};
// E4M3 "fn": S.1111.111 is NaN, no inf; overflow and inf -> NaN (ml_dtypes), max 448.
inline constexpr FloatFormat kF8E4M3{4, 3, 7, 0x7E, 0x7F, 0x7F, false, true};
// E5M2: IEEE-like; ml_dtypes' canonical NaN is S.11111.10.
inline constexpr FloatFormat kF8E5M2{5, 2, 15, 0x7B, 0x7C, 0x7E, false, true};
// E3M4: IEEE-like; canonical NaN S.111.1000, max 15.5.
inline constexpr FloatFormat kF8E3M4{3, 4, 3, 0x6F, 0x70, 0x78, false, true};
// E2M1: no inf, no NaN. ml_dtypes saturates overflow and inf to +-6 and maps NaN to the
// negation of its "quiet_NaN" (which is -0): +NaN -> 0x8 (-0), -NaN -> 0x0 (+0).
inline constexpr FloatFormat kF4E2M1{2, 1, 1, 0x7, 0x7, 0x8, false, false};

}  // namespace trnsim::numerics::detail
