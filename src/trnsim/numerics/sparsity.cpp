// N:M structured sparsity (4:16 on Trainium2): keep the N largest magnitudes of each group.
#include "trnsim/numerics/sparsity.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "trnsim/common/error.h"

namespace trnsim::numerics {
namespace {

constexpr int kMaxGroup = 256;  // indices are stored in uint8_t

void check(const char* what, SparsePattern p, size_t rows, size_t cols, size_t n_dense,
           size_t n_values, size_t n_indices) {
  auto fail = [&](const std::string& msg) { throw ShapeError(std::string(what) + ": " + msg); };
  if (p.group < 1 || p.group > kMaxGroup || p.keep < 1 || p.keep > p.group)
    fail("pattern " + std::to_string(p.keep) + ":" + std::to_string(p.group) +
         " needs 1 <= keep <= group <= " + std::to_string(kMaxGroup));
  if (cols % p.group != 0)
    fail("cols = " + std::to_string(cols) + " is not a multiple of the group size " +
         std::to_string(p.group));
  const size_t dense = rows * cols, packed = rows * (cols / p.group) * p.keep;
  if (n_dense != dense)
    fail("dense array has " + std::to_string(n_dense) + " values, expected rows*cols = " +
         std::to_string(dense));
  if (n_values != packed || n_indices != packed)
    fail("values/indices have " + std::to_string(n_values) + "/" + std::to_string(n_indices) +
         " entries, expected " + std::to_string(packed));
}

// Ranking key: |x|, with NaN below every number (as numpy's argsort of -|x| puts NaN last).
float key(float x) { return std::isnan(x) ? -1.0f : std::fabs(x); }

}  // namespace

void sparse_pack(std::span<const float> in, size_t rows, size_t cols, std::span<float> values,
                 std::span<uint8_t> indices, SparsePattern p) {
  check("sparse_pack", p, rows, cols, in.size(), values.size(), indices.size());
  float k[kMaxGroup];
  size_t out = 0;
  for (size_t g = 0; g < in.size(); g += p.group) {
    const float* x = &in[g];
    for (int j = 0; j < p.group; ++j) k[j] = key(x[j]);
    // Element j is kept when fewer than `keep` elements outrank it (larger key, or equal key
    // and lower index); this keeps exactly `keep`, emitted in index order.
    for (int j = 0; j < p.group; ++j) {
      int rank = 0;
      for (int i = 0; i < p.group; ++i) rank += (k[i] > k[j]) | ((k[i] == k[j]) & (i < j));
      if (rank < p.keep) {
        values[out] = x[j];
        indices[out] = static_cast<uint8_t>(j);
        ++out;
      }
    }
  }
}

void sparse_unpack(std::span<const float> values, std::span<const uint8_t> indices, size_t rows,
                   size_t cols, std::span<float> out, SparsePattern p) {
  check("sparse_unpack", p, rows, cols, out.size(), values.size(), indices.size());
  std::fill(out.begin(), out.end(), 0.0f);
  for (size_t i = 0; i < values.size(); ++i) {
    const size_t group = i / p.keep;
    const bool first = i % p.keep == 0;
    if (indices[i] >= p.group || (!first && indices[i] <= indices[i - 1]))
      throw ShapeError("sparse_unpack: index " + std::to_string(indices[i]) + " at position " +
                       std::to_string(i) + " is not in [0, " + std::to_string(p.group) +
                       ") or not above the previous index of its group");
    out[group * p.group + indices[i]] = values[i];
  }
}

}  // namespace trnsim::numerics
