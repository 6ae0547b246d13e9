// Stochastic rounding: counter-based random bits and the rounding of an fp32 value onto a
// format's grid with probability proportional to its distance from the two neighbours.
#pragma once
#include <cstdint>

#include "trnsim/numerics/dtype.h"
#include "trnsim/numerics/float_codec.h"

namespace trnsim::numerics::detail {

// splitmix64's finaliser (Stafford variant 13): a bijective 64-bit mixer.
constexpr uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
constexpr uint64_t seed_key(uint64_t seed) { return mix64(seed ^ 0x5DEECE66D2545F49ull); }
// Random bits of element `counter` (= offset + i) under a seed: a pure function of both, so
// results never depend on how an array is split into calls or threads.
constexpr uint64_t random_bits(uint64_t key, uint64_t counter) {
  return mix64(key + (counter + 1) * 0x9E3779B97F4A7C15ull);
}

// The grid a format rounds onto: fp32 exponents at and above min_normal_bits keep man_bits
// mantissa bits; below, values are multiples of 2^quantum_exp.
struct Grid {
  uint32_t min_normal_bits;
  int man_bits;
  int quantum_exp;
  bool no_zero;   // E8M0: nothing below 2^-127, so a tiny value rounds up to it
  bool identity;  // fp32: nothing to round
};
Grid grid_of(DType t);  // element formats only

// Round x to one of its two grid neighbours, up with probability (|x| - lo) / (hi - lo), using
// 64 random bits. The result is exactly representable on the grid (or one step past the
// format's max, which the encoder then treats as overflow). NaN and inf pass through. Steps
// more than 2^63 times |x| are rounded down: a bias below 2^-40 of one step.
inline float stochastic_round(float x, const Grid& g, uint64_t bits) {
  const uint32_t u = f2u(x);
  const uint32_t a = u & 0x7FFFFFFFu;
  const uint32_t sign = u & 0x80000000u;
  if (g.identity || a >= 0x7F800000u || a == 0) return x;
  if (a >= g.min_normal_bits) {
    // Normal range: add random bits below the kept mantissa, then truncate. A carry into the
    // exponent is the round-up to the next binade, as it should be.
    const int s = 23 - g.man_bits;
    if (s == 0) return x;
    const uint32_t mask = (1u << s) - 1;
    return u2f(sign | ((a + uint32_t(bits & mask)) & ~mask));
  }
  // Fixed-step range: |x| = sig * 2^(e - 150); count steps of 2^quantum_exp, exactly.
  const uint32_t e = a >> 23;
  const uint64_t sig = (a & 0x7FFFFFu) | (e ? 0x800000u : 0u);
  const int s = g.quantum_exp + 150 - int(e ? e : 1);
  if (s <= 0) return x;  // already a multiple of the step
  uint64_t count = s >= 64 ? 0 : (sig + (bits & ((uint64_t(1) << s) - 1))) >> s;
  if (g.no_zero && count == 0) count = 1;
  const int q = g.quantum_exp;  // 2^q as a float (normal or fp32-subnormal), exact
  const float step = q >= -126 ? u2f(uint32_t(q + 127) << 23) : u2f(1u << (q + 149));
  return u2f(sign | f2u(float(count) * step));
}

}  // namespace trnsim::numerics::detail
