// Element types of the source model and their byte encodings. On the chip every tensor is
// held as fp32 in HBM (integer and boolean tensors are small index/mask tensors; fp32 holds
// integers exactly to 2^24); constants are kept on the host in their own type (const_data.h).
#pragma once
#include <cstdint>
#include <string_view>

#include "trnsim/numerics/dtype.h"

namespace trnsim::compiler {

enum class ElemType : uint8_t { Float, Float16, BFloat16, Double, Int64, Int32, Int16, Int8, UInt64, UInt32, UInt16, UInt8, Bool,
                              Float8E4M3FN, Float8E5M2, Float4E2M1,  // narrow floats: held as fp32 values on the grid
                              Float8E8M0,  // MX block scales (powers of two), from the quantize pass
                              Int4, UInt4, Int2, UInt2 };  // ONNX 4- and 2-bit integers (Cast's wrap-around range)
std::string_view elem_name(ElemType t);
bool is_integral(ElemType t);  // Int*, UInt*, Bool
// The sub-byte integers: their bit width (4 or 2), 0 for every other type; values wrap into
// their range as ONNX Cast does (-9 -> int4 7).
int sub_byte_int_bits(ElemType t);
double wrap_sub_byte_int(ElemType t, double truncated);
bool is_narrow_float(ElemType t);  // fp8 e4m3fn / e5m2, fp4 e2m1, e8m0
numerics::DType narrow_dtype(ElemType t);  // their numerics format
// Bytes that `count` elements take in the type's encoding (fp4: two per byte, rounded up).
int64_t encoded_bytes(ElemType t, int64_t count);

}  // namespace trnsim::compiler
