// Energy of one instruction where its unit counts its work (hw/energy_spec.h): TensorE per MAC
// of the moving operand's dtype, Vector/Scalar/GpSimd per element processed, every engine and
// DMA per byte of SBUF/PSUM it reads or writes, DMA per byte of HBM it reads or writes. Compute
// and scratchpad energy scale with voltage^2 at a lower operating point; HBM's does not.
// A matmul is charged its stationary operand's read every time (an upper bound: TensorE may
// still hold it); a PSUM accumulation is one access per output byte (psum_per_byte covers the
// read-modify-write).
#pragma once
#include "trnsim/hw/chip_spec.h"
#include "trnsim/isa/instruction.h"

namespace trnsim::core {

struct InstructionEnergy {
  double unit_j = 0;  // the engine or DMA queue itself, with its SBUF/PSUM accesses
  double hbm_j = 0;   // HBM reads and writes (DMA only)
};

class EnergyModel {
 public:
  explicit EnergyModel(const hw::EnergySpec& spec);
  InstructionEnergy of(const isa::Op& op, isa::Engine engine) const;
  bool modelled() const { return modelled_; }
  double static_power_w() const { return static_w_; }

 private:
  bool modelled_;
  double mac_j_[static_cast<int>(numerics::DType::kCount)] = {};
  double vector_j_, scalar_j_, gpsimd_j_, sbuf_j_, psum_j_, hbm_j_;
  double static_w_;
};

}  // namespace trnsim::core
