// fp32 <-> element formats: the public scalar and span conversions of convert.h.
#include "trnsim/numerics/convert.h"

#include <algorithm>
#include <string>

#include "trnsim/numerics/codec_dispatch.h"
#include "trnsim/numerics/simd_dispatch.h"
#include "trnsim/numerics/stochastic.h"

namespace trnsim::numerics {
namespace {
using namespace detail;

// The vectorised core: one RNE kernel applied to a contiguous run, built twice (baseline and
// AVX2) from the same loop.
#define TRNSIM_ENCODE_LOOP \
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<Out>(Codec::template encode<kSat>(in[i]))

template <class Codec, bool kSat, class Out>
void encode_rne_baseline(const float* in, Out* out, size_t n) {
  TRNSIM_ENCODE_LOOP;
}

#if TRNSIM_NUMERICS_AVX2
template <class Codec, bool kSat, class Out>
TRNSIM_TARGET_AVX2 void encode_rne_avx2(const float* in, Out* out, size_t n) {
  TRNSIM_ENCODE_LOOP;
}
#endif
#undef TRNSIM_ENCODE_LOOP

// 16-bit decodes (bf16: a shift; fp16: decode_f16), built the same two ways.
#define TRNSIM_DECODE16_LOOP                                                  \
  if (bf16) {                                                                 \
    for (size_t i = 0; i < n; ++i) out[i] = u2f(uint32_t(in[i]) << 16);      \
  } else {                                                                    \
    for (size_t i = 0; i < n; ++i) out[i] = decode_f16(in[i]);                \
  }

void decode16_baseline(const uint16_t* in, float* out, size_t n, bool bf16) {
  TRNSIM_DECODE16_LOOP
}

#if TRNSIM_NUMERICS_AVX2
TRNSIM_TARGET_AVX2 void decode16_avx2(const uint16_t* in, float* out, size_t n, bool bf16) {
  TRNSIM_DECODE16_LOOP
}
#endif
#undef TRNSIM_DECODE16_LOOP

template <class Codec, bool kSat, class Out>
void encode_rne(const float* in, Out* out, size_t n) {
#if TRNSIM_NUMERICS_AVX2
  if (use_avx2()) return encode_rne_avx2<Codec, kSat>(in, out, n);
#endif
  encode_rne_baseline<Codec, kSat>(in, out, n);
}

template <class Codec, class Out>
void encode_run(const float* in, Out* out, size_t n, bool sat) {
  sat ? encode_rne<Codec, true>(in, out, n) : encode_rne<Codec, false>(in, out, n);
}

// Stochastic rounding moves each value onto the grid with its own random bits; the RNE kernel
// then encodes it exactly (and applies the overflow rule to anything past the max).
template <class Codec, class Out>
void encode_stochastic(const float* in, Out* out, size_t n, DType t, const ConvertOptions& opt,
                       bool sat) {
  const Grid g = grid_of(t);
  const uint64_t key = seed_key(opt.seed);
  constexpr size_t kChunk = 512;
  float buf[kChunk];
  for (size_t i = 0; i < n; i += kChunk) {
    const size_t m = std::min(kChunk, n - i);
    for (size_t j = 0; j < m; ++j)
      buf[j] = stochastic_round(in[i + j], g, random_bits(key, opt.offset + i + j));
    encode_run<Codec>(buf, out + i, m, sat);
  }
}

std::string slot_name(size_t bytes) { return "uint" + std::to_string(8 * bytes) + "_t"; }

void check_sizes(const char* what, size_t n_in, size_t n_out) {
  if (n_in != n_out)
    throw ShapeError(std::string(what) + ": input has " + std::to_string(n_in) +
                     " elements but output has " + std::to_string(n_out));
}

template <class Out>
void encode_any(std::span<const float> in, DType t, std::span<Out> out, const ConvertOptions& opt) {
  with_codec(t, "encode", [&](auto codec) {
    using C = decltype(codec);
    if constexpr (!std::is_same_v<typename C::Bits, Out>) {
      throw ShapeError("encode: " + std::string(name(t)) + " codes go in " +
                       slot_name(sizeof(typename C::Bits)) + " slots, not " +
                       slot_name(sizeof(Out)));
    } else {
      check_sizes("encode", in.size(), out.size());
      const bool sat = opt.overflow == Overflow::Saturate;
      if (opt.rounding == Rounding::Stochastic)
        encode_stochastic<C>(in.data(), out.data(), in.size(), t, opt, sat);
      else
        encode_run<C>(in.data(), out.data(), in.size(), sat);
    }
  });
}

// Which slot type a format decodes from (throws for block formats and unknown values).
size_t slot_bytes(DType t, const char* what) {
  return with_codec(t, what, [](auto c) { return sizeof(typename decltype(c)::Bits); });
}

void check_slot(DType t, size_t bytes, const char* what) {
  const size_t want = slot_bytes(t, what);
  if (want != bytes)
    throw ShapeError(std::string(what) + ": " + std::string(name(t)) + " codes come in " +
                     slot_name(want) + " slots, not " + slot_name(bytes));
}

}  // namespace

uint32_t encode(float x, DType t, const ConvertOptions& opt, uint64_t index) {
  return with_codec(t, "encode", [&](auto codec) -> uint32_t {
    using C = decltype(codec);
    float v = x;
    if (opt.rounding == Rounding::Stochastic)
      v = stochastic_round(x, grid_of(t), random_bits(seed_key(opt.seed), opt.offset + index));
    return opt.overflow == Overflow::Saturate ? C::template encode<true>(v)
                                              : C::template encode<false>(v);
  });
}

float decode(uint32_t bits, DType t) {
  const size_t bytes = slot_bytes(t, "decode");
  if (bytes < 4 && bits >> (8 * bytes))
    throw ShapeError("decode: code " + std::to_string(bits) + " does not fit the " +
                     slot_name(bytes) + " slot of " + std::string(name(t)));
  if (const auto* tab = decode_table(t)) return (*tab)[bits];
  if (t == DType::BF16) return u2f(bits << 16);
  if (t == DType::F16) return decode_f16(bits);
  return u2f(bits);  // fp32
}

void encode(std::span<const float> in, DType t, std::span<uint8_t> out,
            const ConvertOptions& opt) {
  encode_any(in, t, out, opt);
}
void encode(std::span<const float> in, DType t, std::span<uint16_t> out,
            const ConvertOptions& opt) {
  encode_any(in, t, out, opt);
}
void encode(std::span<const float> in, DType t, std::span<uint32_t> out,
            const ConvertOptions& opt) {
  encode_any(in, t, out, opt);
}

void decode(std::span<const uint8_t> in, DType t, std::span<float> out) {
  check_slot(t, 1, "decode");
  check_sizes("decode", in.size(), out.size());
  const auto& tab = *decode_table(t);
  for (size_t i = 0; i < in.size(); ++i) out[i] = tab[in[i]];
}

void decode(std::span<const uint16_t> in, DType t, std::span<float> out) {
  check_slot(t, 2, "decode");
  check_sizes("decode", in.size(), out.size());
  const bool bf16 = t == DType::BF16;
#if TRNSIM_NUMERICS_AVX2
  if (use_avx2()) return decode16_avx2(in.data(), out.data(), in.size(), bf16);
#endif
  decode16_baseline(in.data(), out.data(), in.size(), bf16);
}

void decode(std::span<const uint32_t> in, DType t, std::span<float> out) {
  check_slot(t, 4, "decode");
  check_sizes("decode", in.size(), out.size());
  std::transform(in.begin(), in.end(), out.begin(), u2f);
}

}  // namespace trnsim::numerics
