// SBUF: the core's main scratchpad, partitions x bytes_per_partition. In functional mode it
// holds real bytes, initialised to 0xFF so that every float format reads NaN until written
// (as nki.simulate does): an uninitialised read shows up in the results.
#pragma once
#include <cstdint>
#include <vector>

#include "trnsim/core/tile_io.h"
#include "trnsim/hw/chip_spec.h"

namespace trnsim::core {

class Scratchpad {
 public:
  Scratchpad(const hw::MemorySpec& spec, bool functional)
      : partitions_(spec.partitions),
        bytes_per_partition_(static_cast<int64_t>(spec.bytes_per_partition.value())) {
    if (functional) data_.assign(static_cast<size_t>(partitions_) * bytes_per_partition_, 0xFF);
  }
  PartitionBase base() { return {data_.data(), bytes_per_partition_}; }
  int partitions() const { return partitions_; }
  int64_t bytes_per_partition() const { return bytes_per_partition_; }
  bool functional() const { return !data_.empty(); }

 private:
  int partitions_;
  int64_t bytes_per_partition_;
  std::vector<uint8_t> data_;
};

class Sbuf : public Scratchpad {
 public:
  using Scratchpad::Scratchpad;
};

}  // namespace trnsim::core
