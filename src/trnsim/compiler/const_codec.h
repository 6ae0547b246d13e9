// Constants of narrow element types (int8, fp16, bf16, fp8, fp4, e8m0: quantised weights) are
// saved in a program file at their own width, so that a quantised model's file is as small as
// its weights. Values that are not exactly on the type's grid keep the wide form.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

// The packed codes (fp4: two per byte, low nibble first), or nothing when `t` is not a
// narrow type or some value is not exactly representable in it.
std::optional<std::string> pack_narrow(const std::vector<double>& values, ElemType t);
// Inverse of pack_narrow for n values; Error when `bytes` has the wrong length.
std::vector<double> unpack_narrow(const std::string& bytes, size_t n, ElemType t);
// Bytes pack_narrow writes for n values of t (0 when t is not narrow).
size_t packed_bytes(size_t n, ElemType t);

}  // namespace trnsim::compiler
