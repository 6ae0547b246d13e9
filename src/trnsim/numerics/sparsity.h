// 4:16 structured sparsity (Trainium2 TensorE): of every group of 16 consecutive values along
// a row keep the 4 of largest magnitude (ties: lower index first) with their 4-bit indices.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

namespace trnsim::numerics {

struct SparsePattern {
  int keep = 4;    // N of N:M
  int group = 16;  // M of N:M
};

// in: rows x cols (row-major), cols a multiple of group. values: rows x (cols/group*keep),
// indices: same count, each in [0, group), in increasing order within a group.
void sparse_pack(std::span<const float> in, size_t rows, size_t cols, std::span<float> values,
                 std::span<uint8_t> indices, SparsePattern p = {});
// Inverse: zeros everywhere but the kept positions.
void sparse_unpack(std::span<const float> values, std::span<const uint8_t> indices, size_t rows,
                   size_t cols, std::span<float> out, SparsePattern p = {});

}  // namespace trnsim::numerics
