// Binary (de)serialisation of isa::Program, the piece of a saved compiled model
// (compiler/compiled_model_io.h) that holds the instruction streams. Fields are written one by
// one in a fixed little-endian layout (never whole structs: padding bytes would make files
// differ run to run), and every read is bounds-checked and every enum range-checked, so a
// corrupt file is an Error naming the file, the byte offset and the field, never a crash.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trnsim/isa/program.h"

namespace trnsim::isa {

// Appends fixed-width little-endian values to a byte string.
class BinaryWriter {
 public:
  void u8(uint8_t v) { raw(&v, 1); }
  void u16(uint16_t v) { raw(&v, 2); }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void i32(int32_t v) { raw(&v, 4); }
  void i64(int64_t v) { raw(&v, 8); }
  void f32(float v) { raw(&v, 4); }
  void f64(double v) { raw(&v, 8); }
  void boolean(bool v) { u8(v ? 1 : 0); }
  void str(std::string_view s) { u64(s.size()); raw(s.data(), s.size()); }
  void raw(const void* p, size_t n) { bytes_.append(static_cast<const char*>(p), n); }
  const std::string& bytes() const { return bytes_; }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

// Reads what BinaryWriter wrote. Every read checks the remaining length; a failure throws
// Error "<source>: corrupt or truncated file: <what> at byte <offset> (...)".
class BinaryReader {
 public:
  BinaryReader(std::string_view data, std::string source, size_t base_offset = 0)
      : data_(data), source_(std::move(source)), base_(base_offset) {}
  uint8_t u8(const char* what) { uint8_t v; raw(&v, 1, what); return v; }
  uint16_t u16(const char* what) { uint16_t v; raw(&v, 2, what); return v; }
  uint32_t u32(const char* what) { uint32_t v; raw(&v, 4, what); return v; }
  uint64_t u64(const char* what) { uint64_t v; raw(&v, 8, what); return v; }
  int32_t i32(const char* what) { int32_t v; raw(&v, 4, what); return v; }
  int64_t i64(const char* what) { int64_t v; raw(&v, 8, what); return v; }
  float f32(const char* what) { float v; raw(&v, 4, what); return v; }
  double f64(const char* what) { double v; raw(&v, 8, what); return v; }
  bool boolean(const char* what);
  std::string str(const char* what);
  // An enum stored as u8 whose value must be below `count`.
  template <typename E>
  E enumeration(const char* what, int count) {
    const uint8_t v = u8(what);
    if (v >= count) fail(what, "value " + std::to_string(v) + " out of range (< " + std::to_string(count) + ")");
    return static_cast<E>(v);
  }
  // A count of items each at least `min_item_bytes` long: checked against what is left, so a
  // corrupt count cannot ask for a huge allocation.
  size_t count(const char* what, size_t min_item_bytes);
  void raw(void* p, size_t n, const char* what);
  size_t offset() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  const std::string& source() const { return source_; }
  [[noreturn]] void fail(const char* what, const std::string& why) const;

 private:
  std::string_view data_;
  std::string source_;
  size_t base_ = 0;  // offset of data_ in the file, for messages
  size_t pos_ = 0;
};

void write_program(BinaryWriter& w, const Program& p);
// Reads a Program and checks what can be checked without a chip: enum ranges, free-dim
// counts, HBM tensor indices in range, semaphore ids below Program::semaphores. (The runtime
// validates the instructions against the chip when it runs them.)
Program read_program(BinaryReader& r);

}  // namespace trnsim::isa
