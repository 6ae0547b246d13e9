// GpSimd: 8 general-purpose SIMD cores (each wired to 16 partitions) for what the lane
// engines cannot do: iota, cross-partition reduce and broadcast, gather. Cost ~150 + N cycles
// (NKI ISA pages: iota, affine_select, gather); Vector-class instructions placed here cost
// as on VectorE at the GpSimd clock and width.
#pragma once
#include "trnsim/core/unit.h"
#include "trnsim/hw/chip_spec.h"

namespace trnsim::core {

inline constexpr double kGpSimdFixedCycles = 150;

double gpsimd_cycles(const isa::Op& op, const hw::GpSimdSpec& g);
void execute_gpsimd_op(const isa::Op& op, NeuronCore& core);

class GpSimdEngine : public Unit {
 public:
  using Unit::Unit;
 protected:
  sim::Time begin(const isa::Instruction& ins, sim::Time t) override;
};

}  // namespace trnsim::core
