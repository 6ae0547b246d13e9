// What the row-wise library kernels (softmax, layernorm, rmsnorm, activation) share: their
// [rows, cols] shape checks, their SBUF budget and their common registry parameters.
#pragma once
#include <fmt/format.h>

#include <cstdint>
#include <utility>

#include "trnsim/common/error.h"
#include "trnsim/kernels/kernel_builder.h"
#include "trnsim/kernels/registry.h"
#include "trnsim/kernels/tiling.h"

namespace trnsim::kernels {

inline std::pair<int64_t, int64_t> matrix_shape(const View& t, const char* kernel, const char* what) {
  if (t.shape().size() != 2)
    throw ShapeError(fmt::format("{}: {} must be 2-D [rows, cols], it has {} axes", kernel, what, t.shape().size()));
  return {t.shape()[0], t.shape()[1]};
}

inline void require_same_shape(const View& a, const View& b, const char* kernel) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype())
    throw ShapeError(fmt::format("{}: input and output must have the same shape and dtype", kernel));
}

// A 1-D tensor of n elements (its view is [n, 1]: the one axis on the partitions).
inline bool is_vector(const Tensor& t, int64_t n) {
  return t.shape().size() == 2 && t.shape()[0] == n && t.shape()[1] == 1;
}

// Bytes per partition a kernel's rotating tiles may take: half of SBUF, leaving the rest for
// whatever runs beside it.
inline int64_t sbuf_budget(const KernelBuilder& kb) {
  return static_cast<int64_t>(kb.chip().core.sbuf.bytes_per_partition.value()) / 2;
}

inline KernelParam rows_param() { return {"rows", "rows (one per partition, tiled by 128)", KernelParam::Kind::Int, 1024, 1, 1 << 24, {}}; }
inline KernelParam cols_param() { return {"cols", "columns (the free axis; longer rows go in chunks)", KernelParam::Kind::Int, 1024, 1, 1 << 24, {}}; }
inline KernelParam chunk_param() {
  return {"chunk", "free-axis chunk in elements (0: the widest that fits in SBUF)", KernelParam::Kind::Int, 0, 0, 65536, {}};
}

}  // namespace trnsim::kernels

namespace trnsim::kernels {

// A per-column parameter vector (layernorm gamma/beta, rmsnorm gamma) broadcast to every
// partition: read from HBM once and copied across partitions on chip (load_broadcast). When
// the row fits in one chunk it is loaded once and stays resident; otherwise
// each chunk's slice is loaded (into a rotating tile) where it is needed.
class ColumnParam {
 public:
  ColumnParam(KernelBuilder& kb, const Tensor& v, int64_t width, bool resident, const char* name)
      : kb_(kb), v_(v), ring_(kb, Space::SBUF, {128, width}, v.dtype(), resident ? 1 : 2, name),
        resident_(resident) {
    if (resident_) {
      const Tile& t = ring_.next();
      kb_.load_broadcast(t.slice({{0, 128}, {0, width}}), broadcast_rows(v_, 0, width, 128));
      tile_ = t;
    }
  }
  // The slice for columns [c.begin, c.end) on p partitions.
  View chunk(const Span& c, int64_t p) {
    if (resident_) return tile_.slice({{0, p}, {c.begin, c.end()}});
    View t = corner(ring_.next(), p, c.size);
    kb_.load_broadcast(t, broadcast_rows(v_, c.begin, c.size, p));
    return t;
  }
 private:
  KernelBuilder& kb_;
  const Tensor& v_;
  TileRing ring_;
  bool resident_;
  Tile tile_;
};


}  // namespace trnsim::kernels
