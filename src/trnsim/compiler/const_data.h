// A constant tensor's values as the IR holds them, in one of three forms:
//   encoded:    the bytes of its own element type (little-endian; fp4 two per byte), as the
//               model file gave them: viewed in place in the memory-mapped file (pages are
//               read only when a value is), or owned. Every initialiser is held so.
//   decoded:    values as doubles, for the small constants passes make (shape operands,
//               scalars, indices; exact for integers below 2^53).
//   shape-only: no values at all (CompileOptions::timing_only: a weight-sized constant folded
//               from weights keeps its type and count, never its values).
// Copies share the storage: copying a Graph never copies its weights. Reading a value of a
// shape-only constant is an Error (a timing-only program cannot run functionally).
#pragma once
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "trnsim/compiler/elem_type.h"

namespace trnsim::compiler {

class ConstData {
 public:
  ConstData() = default;                  // decoded, no values
  ConstData(std::vector<double> values);  // NOLINT(google-explicit-constructor): `t.data = std::vector<double>{...}`
  // `count` elements of `type` encoded in `bytes`, which `owner` keeps alive (a mapped file).
  // `bytes` must be encoded_bytes(type, count) long (the importer checks, naming the tensor).
  static ConstData encoded(ElemType type, int64_t count, std::string_view bytes, std::shared_ptr<const void> owner);
  static ConstData owned(ElemType type, int64_t count, std::string bytes);
  static ConstData shape_only(ElemType type, int64_t count);
  // Values already rounded to `type` (host evaluation): encoded when large and every value
  // round-trips through the type's encoding, else decoded.
  // `min_values`: fewer values stay decoded (cheap to read; a saved program packs every one).
  static ConstData packed(ElemType type, std::vector<double> values, size_t min_values = 4096);

  size_t size() const { return static_cast<size_t>(count_); }
  bool empty() const { return count_ == 0; }
  bool loaded() const { return kind_ != Kind::ShapeOnly; }
  bool is_encoded() const { return kind_ == Kind::Encoded; }
  ElemType encoding() const { return type_; }     // of bytes() (encoded, shape-only)
  std::string_view bytes() const { return bytes_; }  // encoded: the raw bytes; else empty
  int64_t host_bytes() const;                     // bytes of values held (mapped or owned)

  double operator[](size_t i) const;  // decoded element i
  double front() const { return (*this)[0]; }
  std::vector<double> values() const;  // every element, decoded
  std::vector<float> floats() const;   // every element as fp32 (what the chip's HBM holds)
  bool operator==(const ConstData& o) const;  // same count and values (shape-only: same type)

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = double;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = double;
    const_iterator() = default;
    const_iterator(const ConstData* d, size_t i) : d_(d), i_(i) {}
    double operator*() const { return (*d_)[i_]; }
    const_iterator& operator++() { ++i_; return *this; }
    const_iterator operator++(int) { auto t = *this; ++i_; return t; }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }
   private:
    const ConstData* d_ = nullptr;
    size_t i_ = 0;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }

 private:
  enum class Kind : uint8_t { Decoded, Encoded, ShapeOnly } kind_ = Kind::Decoded;
  ElemType type_ = ElemType::Double;
  int64_t count_ = 0;
  std::shared_ptr<const std::vector<double>> values_;  // decoded
  std::shared_ptr<const void> owner_;                  // encoded: keeps bytes_ alive
  std::string_view bytes_;
  double decode(size_t i) const;
  [[noreturn]] void not_loaded() const;
};

}  // namespace trnsim::compiler
