// Data of a constant the compiler makes (zeros, ones, an identity): its host memory is checked
// against the limit before it is spent; a declared dim of 2^32 reached the allocator with
// 96 GiB (fuzz, onnx_structured).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "trnsim/common/error.h"
#include "trnsim/common/limits.h"

namespace trnsim::compiler {

// `count` copies of `value`; `what` names the tensor for the error.
inline std::vector<double> filled(int64_t count, double value, const std::string& what) {
  if (count < 0) throw ShapeError(what + ": a negative element count");
  check_memory(8.0 * static_cast<double>(count), what);
  return std::vector<double>(static_cast<size_t>(count), value);
}

}  // namespace trnsim::compiler
