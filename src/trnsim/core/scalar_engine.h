// ScalarE: activation functions out = func(in * scale + bias) through the lookup/ALU pipeline,
// with an optional free-axis sum. Cost max(MIN_II, N) cycles (+MIN_II with the reduction),
// as in the NKI ISA pages; tensor_copy and tensor_scalar may also run here.
#pragma once
#include "trnsim/core/unit.h"

namespace trnsim::core {

void execute_activation(const isa::Activation& a, NeuronCore& core);

class ScalarEngine : public Unit {
 public:
  using Unit::Unit;
 protected:
  sim::Time begin(const isa::Instruction& ins, sim::Time t) override;
};

}  // namespace trnsim::core
