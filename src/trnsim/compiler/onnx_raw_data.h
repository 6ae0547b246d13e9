// The ONNX importer's way to weights without copying them: the model file memory-mapped
// read-only, and its initialisers' raw_data located in it by walking the protobuf wire format,
// so that the ModelProto is parsed from a copy with those bytes left out (kilobytes for a
// model of gigabytes). Each initialiser's ConstData then views its bytes in the mapping, whose
// pages are read only when a value is: a timing-only run reads none.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trnsim::compiler {

// A whole file mapped read-only (shared by the ConstData that view it; unmapped with the last).
class MappedFile {
 public:
  // Error "<what>: cannot open/map '<path>'" when it cannot; `path` must be a regular file.
  MappedFile(const std::string& path, const std::string& what);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::string_view bytes() const { return {static_cast<const char*>(map_), size_}; }

 private:
  void* map_ = nullptr;
  size_t size_ = 0;
};

// A ModelProto's bytes with every graph initialiser's raw_data field removed, and where each
// removed field's bytes were: raw[k] for the k-th initialiser in file order (nullopt: it had
// none). nullopt when the bytes are not a well-formed message (the caller parses them whole
// and reports the error as usual).
struct StrippedModel {
  std::string model;
  std::vector<std::optional<std::string_view>> raw;
};
std::optional<StrippedModel> strip_initializer_data(std::string_view model);

}  // namespace trnsim::compiler
