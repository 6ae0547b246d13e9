// Energy and power coefficients of a chip and a system (configs/chips, configs/systems, block
// `energy:`), and the chip's DVFS operating points. Every unit that counts work counts energy
// with these: TensorE per MAC by dtype, Vector/Scalar/GpSimd per element, SBUF/PSUM per byte
// accessed, HBM per byte moved, links per byte per traversal, plus static (idle/leakage) power.
// The presets set them so that a chip at 100% TensorE (bf16, all cores) draws its configured
// `power` (tests/cpp/core/energy_test.cpp holds that within 2%).
#pragma once
#include <map>
#include <vector>

#include "trnsim/common/units.h"
#include "trnsim/numerics/dtype.h"

namespace trnsim::hw {

// One DVFS point relative to the top (published) one: clocks x clock_scale at voltage x
// voltage_scale. Listed from the top point {1, 1} down.
struct OperatingPoint {
  double clock_scale = 1;
  double voltage_scale = 1;
};

struct EnergySpec {
  bool modelled = false;            // false: the chip file has no energy block (no figures)
  Watts full_power;                 // at 100% TensorE (bf16, all cores): what the coefficients are sized for
  Watts static_power;               // idle + leakage of the whole chip at the top point
  std::map<numerics::DType, Joules> tensor_per_mac;  // one multiply-add on the PE array
  Joules vector_per_element, scalar_per_element, gpsimd_per_element;
  Joules sbuf_per_byte, psum_per_byte;  // read or written by an engine or a DMA
  Joules hbm_per_byte;              // read or written in HBM
  Joules link_per_byte;             // one chip-to-chip link traversal (both SerDes ends)
  std::vector<OperatingPoint> operating_points;  // top first; at least {1, 1}

  // The operating point in use (apply_clock_scale). Dynamic compute energy scales with
  // voltage^2, static power with voltage (leakage, first order); HBM and links keep theirs.
  double clock_scale = 1;
  double voltage_scale = 1;
  double dynamic_scale() const { return voltage_scale * voltage_scale; }

  // Voltage (relative) at a clock scale, interpolated linearly between operating points;
  // UnsupportedError outside [lowest point, 1].
  double voltage_at(double clock_scale) const;
  double min_clock_scale() const;
};

// Energy beyond the chips of a system.
struct SystemEnergySpec {
  bool modelled = false;
  Watts host_power_per_instance;    // CPUs, memory, NICs, fans, PSU losses of one instance
  Joules switch_per_byte;           // one traversal of a scale-up switch (NVSwitch, NeuronSwitch)
  Joules scale_out_per_byte;        // EFA/InfiniBand: NIC + optics + switches, per byte sent
};

}  // namespace trnsim::hw
