// Recycled host buffers for functional-mode memories (SBUF, PSUM, HBM tensors, TensorE's
// decoded tiles). A fresh multi-MiB std::vector is fresh pages from the kernel: on a run of a
// few milliseconds the page faults of a 24 MiB SBUF cost as much as the arithmetic. Buffers
// given back at the end of a run serve the next one (process-wide, thread-safe, at most
// kMaxPooledBytes kept). Contents of a taken buffer are unspecified.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace trnsim::core {

inline constexpr size_t kMaxPooledBytes = size_t{512} << 20;

std::vector<uint8_t> take_bytes(size_t n);
void give_back(std::vector<uint8_t>&& v);
std::vector<float> take_floats(size_t n);
void give_back(std::vector<float>&& v);

}  // namespace trnsim::core
