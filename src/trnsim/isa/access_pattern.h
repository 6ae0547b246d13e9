// Memory spaces and access patterns: how every instruction names the data it reads and writes.
// A pattern is a tile view: a partition range (the first axis) times up to 4 free-axis
// [stride, count] dimensions (outermost first, strides in elements). SBUF/PSUM are 2-D
// (partition x bytes-in-partition); an HBM tensor is flat, so there the partition axis is one
// more stride (`partition_stride`, in elements) and `offset` is from the tensor's first byte.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "trnsim/numerics/dtype.h"

namespace trnsim::isa {

using numerics::DType;

enum class Space : uint8_t { HBM, SBUF, PSUM };
std::string_view space_name(Space s);

inline constexpr int kMaxPartitions = 128;
inline constexpr int kMaxFreeDims = 4;
inline constexpr int kPsumBankBytes = 2048;  // per partition; 512 fp32

struct Dim {
  int32_t stride = 1;  // elements
  int32_t count = 1;
};

struct AccessPattern {
  Space space = Space::SBUF;
  DType dtype = DType::F32;
  uint8_t ndims = 1;              // free dims in use, 0..4 (0: one element per partition)
  uint8_t start_partition = 0;    // SBUF/PSUM
  uint16_t partitions = 1;        // partition-axis size
  uint32_t tensor = 0;            // HBM: index into Program::tensors
  int64_t offset = 0;             // bytes: SBUF/PSUM within each partition; HBM from tensor base
  int64_t partition_stride = 0;   // HBM only: elements between consecutive partition rows
  std::array<Dim, kMaxFreeDims> dims{};

  // Elements per partition (product of the free counts).
  int64_t free_size() const {
    int64_t n = 1;
    for (int i = 0; i < ndims; ++i) n *= dims[i].count;
    return n;
  }
  int64_t elements() const { return free_size() * partitions; }
  int element_bytes() const;                 // storage bytes of one element of dtype
  int64_t bytes() const { return elements() * element_bytes(); }
  // Element offset (from `offset`) of free index i (0 <= i < free_size(), row-major over dims).
  int64_t element_offset(int64_t i) const {
    int64_t off = 0;
    for (int d = ndims - 1; d >= 0; --d) {
      int64_t c = dims[d].count;
      off += (i % c) * dims[d].stride;
      i /= c;
    }
    return off;
  }
  // True when the free dims walk consecutive elements (one run per partition).
  bool contiguous() const;
  // Length in elements of the innermost run of consecutive elements (for DMA efficiency and
  // the "stride over 16 bytes" rule).
  int64_t contiguous_run() const;
  // Half-open byte interval [lo, hi) inside a partition (SBUF/PSUM) or tensor (HBM) touched by
  // the pattern (the bounding box used for dependency tracking and bounds checks).
  std::pair<int64_t, int64_t> byte_extent() const;

  // Convenience views. Same pattern with a different free shape or partition window.
  AccessPattern with_partitions(int start, int count) const;
  std::string to_string() const;     // "sbuf[0:128, +4096 (512)x2 bf16]"
};

// A contiguous [partitions, free] tile of `dtype` at a byte offset of SBUF or PSUM.
AccessPattern tile_ap(Space s, int start_partition, int partitions, int64_t byte_offset,
                      int64_t free_elems, DType t);

}  // namespace trnsim::isa
