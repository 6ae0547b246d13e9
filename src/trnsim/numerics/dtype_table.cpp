// The dtype table and name lookup. One row per DType, in enum order; the static_asserts below
// fail the build if a DType is added without its row.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <string>

#include "trnsim/common/error.h"
#include "trnsim/numerics/dtype.h"

namespace trnsim::numerics {
namespace {

constexpr size_t kNumDTypes = static_cast<size_t>(DType::kCount);
using D = DType;

// id, name, bits, is_float, exp, man, bias, sign, inf, nan, max, min normal, min subnormal,
// block, element, scale. MX rows describe the element (limits before the shared scale).
constexpr std::array<DTypeInfo, kNumDTypes> kTable = {{
    {D::F32, "fp32", 32, true, 8, 23, 127, true, true, true, 0x1.fffffep127, 0x1p-126, 0x1p-149,
     1, D::F32, D::F32},
    {D::BF16, "bf16", 16, true, 8, 7, 127, true, true, true, 0x1.fep127, 0x1p-126, 0x1p-133, 1,
     D::BF16, D::BF16},
    {D::F16, "fp16", 16, true, 5, 10, 15, true, true, true, 65504.0, 0x1p-14, 0x1p-24, 1, D::F16,
     D::F16},
    {D::F8E4M3, "fp8_e4m3", 8, true, 4, 3, 7, true, false, true, 448.0, 0x1p-6, 0x1p-9, 1,
     D::F8E4M3, D::F8E4M3},
    {D::F8E5M2, "fp8_e5m2", 8, true, 5, 2, 15, true, true, true, 57344.0, 0x1p-14, 0x1p-16, 1,
     D::F8E5M2, D::F8E5M2},
    {D::F8E3M4, "fp8_e3m4", 8, true, 3, 4, 3, true, true, true, 15.5, 0x1p-2, 0x1p-6, 1,
     D::F8E3M4, D::F8E3M4},
    {D::F4E2M1, "fp4_e2m1", 4, true, 2, 1, 1, true, false, false, 6.0, 1.0, 0.5, 1, D::F4E2M1,
     D::F4E2M1},
    {D::E8M0, "e8m0", 8, true, 8, 0, 127, false, false, true, 0x1p127, 0x1p-127, 0x1p-127, 1,
     D::E8M0, D::E8M0},
    // int8: "mantissa" is the 7 magnitude bits; no exponent.
    {D::I8, "int8", 8, false, 0, 7, 0, true, false, false, 127.0, 1.0, 1.0, 1, D::I8, D::I8},
    {D::MXFP8E4M3, "mxfp8_e4m3", 8, true, 4, 3, 7, true, false, true, 448.0, 0x1p-6, 0x1p-9, 32,
     D::F8E4M3, D::E8M0},
    {D::MXFP8E5M2, "mxfp8_e5m2", 8, true, 5, 2, 15, true, true, true, 57344.0, 0x1p-14, 0x1p-16,
     32, D::F8E5M2, D::E8M0},
    {D::MXFP4, "mxfp4", 4, true, 2, 1, 1, true, false, false, 6.0, 1.0, 0.5, 32, D::F4E2M1,
     D::E8M0},
}};

constexpr bool table_in_enum_order() {
  for (size_t i = 0; i < kTable.size(); ++i)
    if (static_cast<size_t>(kTable[i].id) != i) return false;
  return true;
}
static_assert(kTable.size() == kNumDTypes, "the dtype table must have one row per DType");
static_assert(table_in_enum_order(), "dtype table rows must follow the DType enum order");

struct Alias {
  std::string_view name;
  DType id;
};
// Names used by ml_dtypes, numpy and torch, so users can pass what they already know.
constexpr Alias kAliases[] = {
    {"float32", D::F32},        {"f32", D::F32},          {"float", D::F32},
    {"bfloat16", D::BF16},      {"float16", D::F16},      {"half", D::F16},
    {"f16", D::F16},            {"float8_e4m3fn", D::F8E4M3}, {"e4m3", D::F8E4M3},
    {"float8_e5m2", D::F8E5M2}, {"e5m2", D::F8E5M2},      {"float8_e3m4", D::F8E3M4},
    {"e3m4", D::F8E3M4},        {"float4_e2m1fn", D::F4E2M1}, {"e2m1", D::F4E2M1},
    {"fp4", D::F4E2M1},         {"float8_e8m0fnu", D::E8M0}, {"i8", D::I8},
    {"mxfp8_e4m3fn", D::MXFP8E4M3},
};

}  // namespace

const DTypeInfo& info(DType t) {
  const auto i = static_cast<size_t>(t);
  if (i >= kNumDTypes) throw UnsupportedError("unknown DType value " + std::to_string(i));
  return kTable[i];
}

std::optional<DType> parse_dtype(std::string_view s) {
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const auto& row : kTable)
    if (row.name == lower) return row.id;
  for (const auto& a : kAliases)
    if (a.name == lower) return a.id;
  return std::nullopt;
}

DType dtype_from_string(std::string_view s) {
  if (auto t = parse_dtype(s)) return *t;
  std::string names;
  for (const auto& row : kTable) names += (names.empty() ? "" : ", ") + std::string(row.name);
  throw UnsupportedError("unknown dtype '" + std::string(s) + "': expected one of " + names +
                         " (or an ml_dtypes/numpy name such as bfloat16, float8_e4m3fn)");
}

std::vector<DType> all_dtypes() {
  std::vector<DType> out;
  for (const auto& row : kTable) out.push_back(row.id);
  return out;
}

double storage_bytes(DType t, double n_elements) {
  if (!(n_elements >= 0))
    throw ShapeError("storage_bytes: element count must be >= 0, got " +
                     std::to_string(n_elements));
  const DTypeInfo& d = info(t);
  double bytes = std::ceil(n_elements * d.bits / 8.0);
  if (d.block_size > 1) bytes += std::ceil(n_elements / d.block_size);  // one E8M0 per block
  return bytes;
}

}  // namespace trnsim::numerics
