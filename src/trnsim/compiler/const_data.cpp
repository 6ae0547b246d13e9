#include "trnsim/compiler/const_data.h"

#include "trnsim/compiler/const_codec.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "trnsim/common/error.h"
#include "trnsim/numerics/convert.h"

namespace trnsim::compiler {
namespace {

template <typename T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void store(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

// Element i of `type` in `b` (count checked by the caller).
double decode_at(ElemType type, const char* b, size_t i) {
  switch (type) {
    case ElemType::Float: return load<float>(b + 4 * i);
    case ElemType::Double: return load<double>(b + 8 * i);
    case ElemType::Int64: return static_cast<double>(load<int64_t>(b + 8 * i));
    case ElemType::UInt64: return static_cast<double>(load<uint64_t>(b + 8 * i));
    case ElemType::Int32: return load<int32_t>(b + 4 * i);
    case ElemType::UInt32: return load<uint32_t>(b + 4 * i);
    case ElemType::Int16: return load<int16_t>(b + 2 * i);
    case ElemType::UInt16: return load<uint16_t>(b + 2 * i);
    case ElemType::Int8: return load<int8_t>(b + i);
    case ElemType::UInt8: case ElemType::Bool: return load<uint8_t>(b + i);
    case ElemType::Float16: return numerics::decode(load<uint16_t>(b + 2 * i), numerics::DType::F16);
    case ElemType::BFloat16: return numerics::decode(load<uint16_t>(b + 2 * i), numerics::DType::BF16);
    case ElemType::Float8E4M3FN: case ElemType::Float8E5M2: case ElemType::Float8E8M0:
      return numerics::decode(load<uint8_t>(b + i), narrow_dtype(type));
    case ElemType::Float4E2M1: {  // two codes per byte, low nibble first
      const uint8_t byte = load<uint8_t>(b + i / 2);
      return numerics::decode(i % 2 ? byte >> 4 : byte & 0xF, numerics::DType::F4E2M1);
    }
    case ElemType::Int4: case ElemType::UInt4: case ElemType::Int2: case ElemType::UInt2: {  // low bits first
      const int bits = sub_byte_int_bits(type), per = 8 / bits;
      const uint8_t byte = load<uint8_t>(b + i / per);
      const int code = (byte >> (bits * static_cast<int>(i % per))) & ((1 << bits) - 1);
      return wrap_sub_byte_int(type, code);  // two's complement for the signed ones
    }
  }
  return 0;
}

// Appends v as integer type T; false when T cannot hold it (NaN, out of range): the cast would
// be undefined (UBSan in ConstData.PacksOnlyExactLargeValues: 3e9 to int32).
template <class T>
bool store_int(std::string& out, double v) {
  const double lo = static_cast<double>(std::numeric_limits<T>::min());
  const double hi = static_cast<double>(std::numeric_limits<T>::max()) + 1.0;  // exclusive; exact: a power of 2
  if (!(v >= lo && v < hi)) return false;
  store(out, static_cast<T>(v));
  return true;
}

// Appends v in `type`'s encoding; false for a type packed() leaves decoded, or a value the
// integer type cannot hold (packed() then keeps the values decoded, as for any inexact one).
bool encode_one(ElemType type, double v, std::string& out) {
  switch (type) {
    case ElemType::Float: store(out, static_cast<float>(v)); return true;
    case ElemType::Double: store(out, v); return true;
    case ElemType::Int64: return store_int<int64_t>(out, v);
    case ElemType::Int32: return store_int<int32_t>(out, v);
    case ElemType::Int8: return store_int<int8_t>(out, v);
    case ElemType::UInt8: case ElemType::Bool: return store_int<uint8_t>(out, v);
    case ElemType::Float16: store(out, static_cast<uint16_t>(numerics::encode(static_cast<float>(v), numerics::DType::F16))); return true;
    case ElemType::BFloat16: store(out, static_cast<uint16_t>(numerics::encode(static_cast<float>(v), numerics::DType::BF16))); return true;
    default: return false;
  }
}


}  // namespace

ConstData::ConstData(std::vector<double> values)
    : count_(static_cast<int64_t>(values.size())), values_(std::make_shared<const std::vector<double>>(std::move(values))) {}

ConstData ConstData::encoded(ElemType type, int64_t count, std::string_view bytes, std::shared_ptr<const void> owner) {
  ConstData d;
  d.kind_ = Kind::Encoded;
  d.type_ = type;
  d.count_ = count;
  d.bytes_ = bytes;
  d.owner_ = std::move(owner);
  return d;
}

ConstData ConstData::owned(ElemType type, int64_t count, std::string bytes) {
  auto s = std::make_shared<const std::string>(std::move(bytes));
  const std::string_view view(*s);
  return encoded(type, count, view, std::move(s));
}

ConstData ConstData::shape_only(ElemType type, int64_t count) {
  ConstData d;
  d.kind_ = Kind::ShapeOnly;
  d.type_ = type;
  d.count_ = count;
  return d;
}

ConstData ConstData::packed(ElemType type, std::vector<double> values, size_t min_values) {
  if (values.size() < min_values) return ConstData(std::move(values));
  if (is_narrow_float(type)) {  // fp8 / fp4 / e8m0 codes (quantised weights): const_codec packs them
    auto bytes = pack_narrow(values, type);
    const auto n = static_cast<int64_t>(values.size());
    return bytes ? owned(type, n, std::move(*bytes)) : ConstData(std::move(values));
  }
  std::string bytes;
  bytes.reserve(static_cast<size_t>(encoded_bytes(type, static_cast<int64_t>(values.size()))));
  for (size_t i = 0; i < values.size(); ++i) {
    if (!encode_one(type, values[i], bytes)) return ConstData(std::move(values));
    const double back = decode_at(type, bytes.data(), i);
    const bool same = std::bit_cast<uint64_t>(back) == std::bit_cast<uint64_t>(values[i]) || (std::isnan(back) && std::isnan(values[i]));
    if (!same) return ConstData(std::move(values));  // not exact in the type (an int32 past its range)
  }
  return owned(type, static_cast<int64_t>(values.size()), std::move(bytes));
}

int64_t ConstData::host_bytes() const {
  switch (kind_) {
    case Kind::Decoded: return count_ * static_cast<int64_t>(sizeof(double));
    case Kind::Encoded: return static_cast<int64_t>(bytes_.size());
    case Kind::ShapeOnly: return 0;
  }
  return 0;
}

void ConstData::not_loaded() const {
  throw Error(fmt::format("the values of a {} constant of {} elements were not computed (compiled timing-only: "
                          "weights are shapes and types only); compile without timing-only to run it functionally",
                          elem_name(type_), count_));
}

double ConstData::decode(size_t i) const { return decode_at(type_, bytes_.data(), i); }

double ConstData::operator[](size_t i) const {
  if (kind_ == Kind::Decoded) return (*values_)[i];
  if (kind_ == Kind::ShapeOnly) not_loaded();
  return decode(i);
}

std::vector<double> ConstData::values() const {
  if (kind_ == Kind::Decoded) return values_ ? *values_ : std::vector<double>{};
  if (kind_ == Kind::ShapeOnly) not_loaded();
  std::vector<double> v(size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = decode(i);
  return v;
}

std::vector<float> ConstData::floats() const {
  if (kind_ == Kind::ShapeOnly) not_loaded();
  std::vector<float> v(size());
  if (kind_ == Kind::Encoded && type_ == ElemType::Float) {
    if (!v.empty()) std::memcpy(v.data(), bytes_.data(), v.size() * sizeof(float));
    return v;
  }
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((*this)[i]);
  return v;
}

bool ConstData::operator==(const ConstData& o) const {
  if (count_ != o.count_) return false;
  if (!loaded() || !o.loaded()) return loaded() == o.loaded() && type_ == o.type_;
  for (size_t i = 0; i < size(); ++i)
    if ((*this)[i] != o[i]) return false;
  return true;
}

}  // namespace trnsim::compiler
