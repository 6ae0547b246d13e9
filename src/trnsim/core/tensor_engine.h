// TensorE: the 128x128 systolic array. Matmul contracts over the partition axis into PSUM
// (fp32 accumulate); transpose is an identity matmul.
//
// Cost (NKI ISA pages), in TensorE cycles:
//   MultiplyMoving   max(min(64, M), N) / rate(dtype)   (rate: bf16 1, fp32 0.25, fp8 on v3 2;
//                                                        a sparse stationary: sparse_speedup)
//   LoadStationary   M * stationary_load_cycles_fraction / rate, needed when the stationary
//                    operand differs from the previous matmul's; it runs behind the previous
//                    MultiplyMoving when TensorE was busy (so it is hidden when that one took at
//                    least as long), and in full when TensorE had been idle waiting for data.
//   transpose        max(P, min(64, F)) / rate
#pragma once
#include "trnsim/core/unit.h"
#include "trnsim/hw/chip_spec.h"

namespace trnsim::core {

class TensorEngine : public Unit {
 public:
  using Unit::Unit;
  static double multiply_cycles(const isa::Op& op, const hw::TensorEngineSpec& te);
  static double load_stationary_cycles(const isa::Matmul& mm, const hw::TensorEngineSpec& te);

 protected:
  sim::Time begin(const isa::Instruction& ins, sim::Time t) override;

 private:
  void execute(const isa::Matmul& mm);
  void execute(const isa::Transpose& tr);

  bool have_stationary_ = false;
  isa::AccessPattern stationary_{};   // what the PE array holds
  bool stationary_sparse_ = false;
  sim::Time last_end_;
  double last_multiply_cycles_ = 0;
};

}  // namespace trnsim::core
