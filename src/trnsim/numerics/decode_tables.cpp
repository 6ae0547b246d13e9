// Decode tables for the one-byte formats, built at compile time from the bit-level decoders.
#include <array>
#include <cstdint>

#include "trnsim/numerics/float_codec.h"

namespace trnsim::numerics::detail {
namespace {

using Table = std::array<float, 256>;

template <class Fn>
constexpr Table make_table(Fn bits_of) {
  Table t{};
  for (uint32_t c = 0; c < 256; ++c) t[c] = std::bit_cast<float>(bits_of(c));
  return t;
}

template <const FloatFormat& F>
constexpr Table float_table() {
  return make_table([](uint32_t c) { return decode_float_bits(F, c & ((2u * F.sign_bit()) - 1)); });
}

constexpr Table kE4M3 = float_table<kF8E4M3>();
constexpr Table kE5M2 = float_table<kF8E5M2>();
constexpr Table kE3M4 = float_table<kF8E3M4>();
constexpr Table kE2M1 = float_table<kF4E2M1>();
constexpr Table kE8M0 = make_table(decode_e8m0_bits);
constexpr Table kI8 =
    make_table([](uint32_t c) { return std::bit_cast<uint32_t>(float(int8_t(c))); });

static_assert(kE4M3[0x38] == 1.0f && kE4M3[0x7E] == 448.0f && kE4M3[0x01] == 0x1p-9f);
static_assert(kE5M2[0x7B] == 57344.0f && kE3M4[0x6F] == 15.5f && kE2M1[0xF] == -6.0f);
static_assert(kE8M0[127] == 1.0f && kI8[0x80] == -128.0f);

}  // namespace

const std::array<float, 256>* decode_table(DType t) {
  switch (t) {
    case DType::F8E4M3: return &kE4M3;
    case DType::F8E5M2: return &kE5M2;
    case DType::F8E3M4: return &kE3M4;
    case DType::F4E2M1: return &kE2M1;
    case DType::E8M0: return &kE8M0;
    case DType::I8: return &kI8;
    default: return nullptr;
  }
}

}  // namespace trnsim::numerics::detail
