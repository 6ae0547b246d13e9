// HBM: the chip's device memory, shared by its cores. Holds the program's tensors (functional
// mode) and is one bandwidth resource that every DMA touching it shares.
#pragma once
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "trnsim/core/buffer_pool.h"
#include "trnsim/core/tile_io.h"
#include "trnsim/isa/program.h"

namespace trnsim::core {

class Hbm {
 public:
  // Allocates every tensor (functional mode; Input tensors from `inputs`, others NaN-filled).
  Hbm(const isa::Program& program, bool functional,
      const std::map<std::string, std::span<const float>>& inputs);
  ~Hbm();
  Hbm(const Hbm&) = delete;
  Hbm& operator=(const Hbm&) = delete;
  PartitionBase base(uint32_t tensor) { return {data_[tensor].data(), 0}; }
  // Decoded fp32 contents of a tensor (row-major).
  std::vector<float> read(uint32_t tensor) const;

 private:
  const isa::Program& program_;
  std::vector<RawBytes> data_;
};

}  // namespace trnsim::core
