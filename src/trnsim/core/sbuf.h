// SBUF: the core's main scratchpad, partitions x bytes_per_partition. In functional mode it
// holds real bytes, initialised to 0xFF so that every float format reads NaN until written
// (as nki.simulate does): an uninitialised read shows up in the results.
//
// Filling 24 MiB with 0xFF for every kernel run cost a quarter of a model's simulation time,
// so buffers go back to a pool of clean (all-0xFF) buffers with only the bytes this run
// wrote refilled: a run pays for the scratchpad it used, not for the whole of it.
//
// Write stamps (functional mode): the byte axis of a partition is cut into kStampBytes
// columns, each holding the stamp of the last write that touched it (in any partition). A
// reader that caches decoded values (TensorE's operand cache) records stamp() when it decodes
// and later asks last_write(lo, hi) whether anything has written the columns since; this is
// conservative (it ignores the partition range), never wrong.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "trnsim/core/buffer_pool.h"
#include "trnsim/core/tile_io.h"
#include "trnsim/hw/chip_spec.h"

namespace trnsim::core {

class Scratchpad {
 public:
  Scratchpad(const hw::MemorySpec& spec, bool functional);
  ~Scratchpad();
  Scratchpad(const Scratchpad&) = delete;
  Scratchpad& operator=(const Scratchpad&) = delete;
  static constexpr int64_t kStampBytes = 256;
  // Records a write of bytes [lo, hi) of some partitions.
  void note_write(int64_t lo, int64_t hi) {
    if (stamps_.empty() || hi <= lo) return;
    ++stamp_;
    auto [a, b] = columns(lo, hi);
    for (int64_t c = a; c < b; ++c) stamps_[static_cast<size_t>(c)] = stamp_;
  }
  // The stamp of the latest write to any of the bytes [lo, hi).
  uint64_t last_write(int64_t lo, int64_t hi) const {
    uint64_t s = 0;
    auto [a, b] = columns(lo, hi);
    for (int64_t c = a; c < b; ++c) s = std::max(s, stamps_[static_cast<size_t>(c)]);
    return s;
  }
  uint64_t stamp() const { return stamp_; }
  PartitionBase base() { return {data_.data(), bytes_per_partition_}; }
  int partitions() const { return partitions_; }
  int64_t bytes_per_partition() const { return bytes_per_partition_; }
  bool functional() const { return !data_.empty(); }

 private:
  std::pair<int64_t, int64_t> columns(int64_t lo, int64_t hi) const {
    const int64_t n = static_cast<int64_t>(stamps_.size());
    return {std::clamp<int64_t>(lo / kStampBytes, 0, n), std::clamp<int64_t>((hi + kStampBytes - 1) / kStampBytes, 0, n)};
  }

  int partitions_;
  int64_t bytes_per_partition_;
  RawBytes data_;
  std::vector<uint64_t> stamps_;
  uint64_t stamp_ = 0;
};

class Sbuf : public Scratchpad {
 public:
  using Scratchpad::Scratchpad;
};

}  // namespace trnsim::core
