// PSUM: the matmul accumulator, 128 partitions x 16 KiB in 8 banks of 2 KiB (512 fp32). A
// matmul writes one bank; `start` zeroes its accumulation, later matmuls add to it.
// Like SBUF it starts filled with NaN in functional mode.
#pragma once
#include "trnsim/core/sbuf.h"
#include "trnsim/isa/access_pattern.h"

namespace trnsim::core {

class Psum : public Scratchpad {
 public:
  using Scratchpad::Scratchpad;
  static int bank_of(int64_t byte_offset) { return static_cast<int>(byte_offset / isa::kPsumBankBytes); }
};

}  // namespace trnsim::core
