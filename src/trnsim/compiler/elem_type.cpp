#include "trnsim/compiler/elem_type.h"

#include <cmath>

#include "trnsim/common/checked.h"

namespace trnsim::compiler {

std::string_view elem_name(ElemType t) {
  switch (t) {
    case ElemType::Float: return "f32";
    case ElemType::Float16: return "f16";
    case ElemType::BFloat16: return "bf16";
    case ElemType::Double: return "f64";
    case ElemType::Int64: return "i64";
    case ElemType::Int32: return "i32";
    case ElemType::Int16: return "i16";
    case ElemType::Int8: return "i8";
    case ElemType::UInt64: return "u64";
    case ElemType::UInt32: return "u32";
    case ElemType::UInt16: return "u16";
    case ElemType::UInt8: return "u8";
    case ElemType::Bool: return "bool";
    case ElemType::Float8E4M3FN: return "f8e4m3fn";
    case ElemType::Float8E5M2: return "f8e5m2";
    case ElemType::Float4E2M1: return "f4e2m1";
    case ElemType::Float8E8M0: return "f8e8m0";
    case ElemType::Int4: return "i4";
    case ElemType::UInt4: return "u4";
    case ElemType::Int2: return "i2";
    case ElemType::UInt2: return "u2";
  }
  return "?";
}

bool is_integral(ElemType t) {
  return t != ElemType::Float && t != ElemType::Float16 && t != ElemType::BFloat16 && t != ElemType::Double &&
         !is_narrow_float(t);
}

bool is_narrow_float(ElemType t) {
  return t == ElemType::Float8E4M3FN || t == ElemType::Float8E5M2 || t == ElemType::Float4E2M1 || t == ElemType::Float8E8M0;
}

int sub_byte_int_bits(ElemType t) {
  return t == ElemType::Int4 || t == ElemType::UInt4 ? 4 : t == ElemType::Int2 || t == ElemType::UInt2 ? 2 : 0;
}

double wrap_sub_byte_int(ElemType t, double v) {
  const double span = t == ElemType::Int4 || t == ElemType::UInt4 ? 16 : 4;
  const double lo = t == ElemType::Int4 ? -8 : t == ElemType::Int2 ? -2 : 0;
  const double m = std::fmod(v - lo, span);
  return (m < 0 ? m + span : m) + lo;
}

numerics::DType narrow_dtype(ElemType t) {
  if (t == ElemType::Float8E8M0) return numerics::DType::E8M0;
  return t == ElemType::Float8E4M3FN ? numerics::DType::F8E4M3 : t == ElemType::Float8E5M2 ? numerics::DType::F8E5M2 : numerics::DType::F4E2M1;
}

int64_t encoded_bytes(ElemType t, int64_t count) {
  // Checked: counts come from files (a forged .tpg's constant count overflowed 8 * count).
  const char* what = "the encoded size of a constant";
  switch (t) {
    case ElemType::Double: case ElemType::Int64: case ElemType::UInt64: return checked_mul(8, count, what);
    case ElemType::Float: case ElemType::Int32: case ElemType::UInt32: return checked_mul(4, count, what);
    case ElemType::Float16: case ElemType::BFloat16: case ElemType::Int16: case ElemType::UInt16: return checked_mul(2, count, what);
    case ElemType::Float4E2M1: case ElemType::Int4: case ElemType::UInt4: return checked_add(count, 1, what) / 2;
    case ElemType::Int2: case ElemType::UInt2: return checked_add(count, 3, what) / 4;
    default: return count;  // Int8, UInt8, Bool, fp8
  }
}

}  // namespace trnsim::compiler
