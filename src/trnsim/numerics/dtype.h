// The dtype table: every number format trnsim models, with its bit layout and its special-value
// rules. Conversions (convert.h) and everything above (engines, kernels, compiler) read formats
// from here and nowhere else.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trnsim::numerics {

enum class DType : uint8_t {
  F32,
  BF16,
  F16,
  F8E4M3,     // OCP E4M3 "fn": no infinities, one NaN code per sign (S.1111.111), max 448
  F8E5M2,     // IEEE-like: infinities and NaNs, max 57344
  F8E3M4,     // IEEE-like: infinities and NaNs, max 15.5
  F4E2M1,     // OCP FP4 element: no inf, no NaN, max 6 (MX element type); codes one per uint8_t,
              // storage two per byte
  E8M0,       // OCP MX shared scale: 2^(e-127), e=255 is NaN, no sign, no zero (0, <0 -> NaN)
  I8,         // two's complement; from float: round half to even, saturate, NaN -> 0
  MXFP8E4M3,  // OCP MX block format: 32 x E4M3 elements + one E8M0 scale
  MXFP8E5M2,  // 32 x E5M2 + E8M0
  MXFP4,      // 32 x E2M1 + E8M0
  kCount
};

// What happens to a finite value past the format's range, or to an infinity.
enum class Overflow : uint8_t {
  Default,   // the format's own rule, as ml_dtypes: Inf where it has one, NaN for E4M3 and
             // E8M0, +-max for FP4 (no Inf, no NaN), int8 always saturates
  Saturate,  // clamp finite overflow and +-Inf to +-max finite (NaN stays NaN)
};

enum class Rounding : uint8_t { NearestEven, Stochastic };

struct DTypeInfo {
  DType id;
  std::string_view name;       // canonical name, e.g. "bf16", "fp8_e4m3", "mxfp4"
  int bits;                    // bits per element (block formats: per element, scale excluded)
  bool is_float;
  int exponent_bits;           // 0 for int8
  int mantissa_bits;
  int exponent_bias;
  bool has_sign;
  bool has_inf;
  bool has_nan;
  double max_finite;
  double min_normal;           // smallest positive normal
  double min_subnormal;        // smallest positive value (== min_normal if no subnormals)
  int block_size;              // 32 for MX formats, 1 otherwise (MX rows: the element's
                               // fields and limits, before the shared scale)
  DType element;               // MX: the element format; else the dtype itself
  DType scale;                 // MX: E8M0; else the dtype itself
};

const DTypeInfo& info(DType t);
inline std::string_view name(DType t) { return info(t).name; }
inline bool is_block_format(DType t) { return info(t).block_size > 1; }

// Accepts canonical names and common aliases ("bfloat16", "float8_e4m3fn", "e4m3", "int8").
std::optional<DType> parse_dtype(std::string_view s);
// Same, but throws UnsupportedError listing the accepted names.
DType dtype_from_string(std::string_view s);
std::vector<DType> all_dtypes();

// Bytes to store n elements (block formats include their scales; fp4 packs two per byte).
double storage_bytes(DType t, double n_elements);

}  // namespace trnsim::numerics
