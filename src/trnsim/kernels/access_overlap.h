// Exact overlap of strided access patterns, for the kernel builder's dependency tracking.
//
// A pattern's bytes (within one partition for SBUF/PSUM; within the tensor for HBM, where the
// partition axis is one more stride) form a strided set: base + sum_d i_d * stride_d + [0, run).
// Two accesses conflict only if these sets share a byte (and, on chip, the partition ranges
// meet). Interleaved column ranges or heads of one tensor written by different cores have
// overlapping byte extents but disjoint byte sets; the bounding-box test would serialise them.
#pragma once
#include <array>
#include <cstdint>
#include <optional>

#include "trnsim/isa/access_pattern.h"

namespace trnsim::kernels {

// The bytes of a pattern, normalised: no unit or zero-stride dims, positive strides sorted
// outermost (largest) first, inner dims that tile contiguously merged into `run`.
struct ByteSet {
  static constexpr int kMaxDims = isa::kMaxFreeDims + 1;  // free dims + HBM partition axis
  int64_t base = 0;   // first byte
  int64_t run = 0;    // bytes of each contiguous run
  int n = 0;          // dims left
  std::array<int64_t, kMaxDims> stride{}, count{};
  std::array<int64_t, kMaxDims> extent{};  // extent[d]: span of one block of dim d (its inner dims + run)
  bool nested = true;  // every dim's stride >= its block's extent (blocks do not interleave)
  bool empty = false;  // a zero or negative count
  int64_t runs() const;  // number of runs (product of counts)
  int64_t lo() const { return base; }
  int64_t hi() const { return n == 0 ? base + run : base + (count[0] - 1) * stride[0] + extent[0]; }
  bool operator==(const ByteSet& o) const;
};

ByteSet byte_set(const isa::AccessPattern& ap);

// Do the two sets share a byte? nullopt when an exact answer would cost more than about
// `max_runs` runs of enumeration (callers then assume a conflict, which is always safe).
std::optional<bool> bytes_intersect(const ByteSet& a, const ByteSet& b, int64_t max_runs = 4096);

// True only when every byte of `b` is certainly in `a` (a single run containing b's extent, or
// the same set); false when unsure.
bool bytes_cover(const ByteSet& a, const ByteSet& b);

}  // namespace trnsim::kernels
