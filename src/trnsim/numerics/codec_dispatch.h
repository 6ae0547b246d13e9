// Maps a runtime DType to a compile-time codec type, so the conversion loops are instantiated
// once per format with all constants folded (which is what lets them vectorise).
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>

#include "trnsim/common/error.h"
#include "trnsim/numerics/float_codec.h"

namespace trnsim::numerics::detail {

// Each codec: `Bits` (the storage slot), `encode<kSaturate>(float) -> code` (RNE).
template <const FloatFormat& F>
struct FloatCodec {
  using Bits = std::conditional_t<(F.bits() <= 8), uint8_t, uint16_t>;
  template <bool kSat>
  static uint32_t encode(float x) { return encode_float<F, kSat>(x); }
};
struct E8M0Codec {
  using Bits = uint8_t;
  template <bool kSat>
  static uint32_t encode(float x) { return encode_e8m0<kSat>(x); }
};
struct I8Codec {
  using Bits = uint8_t;
  template <bool kSat>
  static uint32_t encode(float x) { return encode_i8(x); }  // int8 always saturates
};
struct F32Codec {
  using Bits = uint32_t;
  template <bool kSat>
  static uint32_t encode(float x) { return encode_f32<kSat>(x); }
};

// Calls fn(Codec{}) for an element format; block formats are refused with a pointer to the
// functions that handle them.
template <class Fn>
decltype(auto) with_codec(DType t, const char* what, Fn&& fn) {
  switch (t) {
    case DType::F32: return fn(F32Codec{});
    case DType::BF16: return fn(FloatCodec<kBF16>{});
    case DType::F16: return fn(FloatCodec<kF16>{});
    case DType::F8E4M3: return fn(FloatCodec<kF8E4M3>{});
    case DType::F8E5M2: return fn(FloatCodec<kF8E5M2>{});
    case DType::F8E3M4: return fn(FloatCodec<kF8E3M4>{});
    case DType::F4E2M1: return fn(FloatCodec<kF4E2M1>{});
    case DType::E8M0: return fn(E8M0Codec{});
    case DType::I8: return fn(I8Codec{});
    default: break;
  }
  if (static_cast<size_t>(t) < static_cast<size_t>(DType::kCount) && is_block_format(t))
    throw UnsupportedError(std::string(what) + ": " + std::string(name(t)) +
                           " is a block format; use mx_quantize/mx_dequantize (or quantize)");
  throw UnsupportedError(std::string(what) + ": unknown DType value " +
                         std::to_string(static_cast<int>(t)));
}

}  // namespace trnsim::numerics::detail
