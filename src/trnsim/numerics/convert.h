// Conversions between fp32 and every dtype in the table, scalar and vectorised.
// Encoded values are the format's bit patterns in the low bits of the integer.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "trnsim/numerics/dtype.h"

namespace trnsim::numerics {

// Stochastic rounding picks one of the two grid neighbours of x, the upper with probability
// proportional to the distance from the lower (so E[result] = x); above the max the upper
// neighbour lies past the range and follows the overflow rule.
struct ConvertOptions {
  Rounding rounding = Rounding::NearestEven;
  Overflow overflow = Overflow::Default;
  uint64_t seed = 0;       // stochastic rounding: element i of a call uses random bits
  uint64_t offset = 0;     // derived from (seed, offset + i), so results never depend on
                           // how an array is split into calls or threads
};

// Scalar, for element formats (not MX block formats). Stochastic rounding draws the random
// bits of counter opt.offset + index, so it agrees with element `index` of a span call.
// NaN, overflow and subnormal results are ml_dtypes 0.6.0's, bit for bit (numpy's for fp16):
// see float_format.h. Block formats throw UnsupportedError; a code wider than its slot throws
// ShapeError.
uint32_t encode(float x, DType t, const ConvertOptions& opt = {}, uint64_t index = 0);
float decode(uint32_t bits, DType t);

// Vectorised element-format conversions. `out`/`in` hold one element per slot of the smallest
// unsigned type that fits the format (uint8_t for 8-bit and fp4, uint16_t for 16-bit, uint32_t
// for fp32); a mismatched call throws ShapeError.
void encode(std::span<const float> in, DType t, std::span<uint8_t> out, const ConvertOptions& opt = {});
void encode(std::span<const float> in, DType t, std::span<uint16_t> out, const ConvertOptions& opt = {});
void encode(std::span<const float> in, DType t, std::span<uint32_t> out, const ConvertOptions& opt = {});
void decode(std::span<const uint8_t> in, DType t, std::span<float> out);
void decode(std::span<const uint16_t> in, DType t, std::span<float> out);
void decode(std::span<const uint32_t> in, DType t, std::span<float> out);

// Round fp32 values in place to what the format can hold (encode then decode). This is what
// the simulator applies when a value is written to a tile of that dtype. Works for MX formats
// too (blocks of 32 consecutive elements share one scale; a short last block is allowed).
void quantize(std::span<float> values, DType t, const ConvertOptions& opt = {});

// OCP MX (v1.0) block quantisation: per block of 32, scale = 2^(floor(log2(amax)) - emax_elem),
// elements = convert(x / scale) saturating to the element's max. elements has one slot per
// value (fp4 in the low nibble), scales one E8M0 code per block (ceil(n / 32); a short last
// block is allowed). Edge cases (the first two as Microsoft's microxcaling reference does):
//  - the shared exponent is clamped below at -127 (E8M0 code 0), so an all-zero block (or one
//    of only tiny values) gets scale 2^-127 and its elements round as usual;
//  - a block holding a NaN or an infinity gets the NaN scale 0xFF, so the whole block decodes
//    to NaN; its element codes are written as 0;
//  - elements always saturate (opt.overflow is ignored); opt.rounding applies to elements,
//    with element i of the call using counter opt.offset + i.
void mx_quantize(std::span<const float> in, DType mx, std::span<uint8_t> elements,
                 std::span<uint8_t> scales, const ConvertOptions& opt = {});
void mx_dequantize(std::span<const uint8_t> elements, std::span<const uint8_t> scales, DType mx,
                   std::span<float> out);

}  // namespace trnsim::numerics
