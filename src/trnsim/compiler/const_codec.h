// Encoding of constants of narrow element types (int8, fp16, bf16, fp8, fp4, e8m0: quantised
// weights) at their own width, for ConstData::packed: held so in memory and in a program file,
// a quantised model is as small as its weights. Values off the type's grid keep the wide form.
// Decoding is ConstData's (const_data.h).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

// The packed codes (fp4: two per byte, low nibble first), or nothing when `t` is not a
// narrow type or some value is not exactly representable in it.
std::optional<std::string> pack_narrow(const std::vector<double>& values, ElemType t);

}  // namespace trnsim::compiler
