// Cutting an axis into tiles: the loops every library kernel runs over the 128 partitions and
// over the free axis. The last tile is short when the size is not a multiple.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "trnsim/isa/access_pattern.h"
#include "trnsim/kernels/kernel_builder.h"

namespace trnsim::kernels {

struct Span {
  int64_t begin = 0;
  int64_t size = 0;
  int64_t end() const { return begin + size; }
  Range range() const { return {begin, begin + size}; }
};

inline std::vector<Span> split(int64_t n, int64_t tile) {
  std::vector<Span> out;
  for (int64_t b = 0; b < n; b += tile) out.push_back({b, std::min(tile, n - b)});
  return out;
}

// Largest free-axis chunk (a multiple of 512 elements, at most `cap`) for which `bytes_per_elem`
// bytes per element of live tiles fit in `budget` bytes of each partition.
inline int64_t chunk_width(int64_t n, int64_t bytes_per_elem, int64_t budget, int64_t cap = 16384) {
  int64_t w = std::max<int64_t>(512, budget / std::max<int64_t>(1, bytes_per_elem) / 512 * 512);
  return std::min({n, w, cap});
}

// The top-left [rows, cols] corner of a tile (or any 2-D view).
inline View corner(const View& v, int64_t rows, int64_t cols) { return v.slice({{0, rows}, {0, cols}}); }

// An HBM 1-D tensor's elements [begin, begin + n) on each of `partitions` partitions: a DMA
// source with partition stride 0, how a per-column parameter (layernorm gamma) is broadcast.
inline View broadcast_rows(const Tensor& t, int64_t begin, int64_t n, int64_t partitions) {
  isa::AccessPattern a = t.ap();
  a.offset += begin * a.element_bytes();
  a.partitions = static_cast<uint16_t>(partitions);
  a.partition_stride = 0;
  a.ndims = 1;
  a.dims = {};
  a.dims[0] = {1, static_cast<int32_t>(n)};
  return View(a, {partitions, n}, t.buffer());
}

}  // namespace trnsim::kernels
