// Reading the `energy:` blocks of chip and system files (energy_spec.h), and moving a chip to
// another DVFS operating point.
#pragma once
#include <set>

#include "trnsim/hw/chip_spec.h"
#include "trnsim/hw/yaml_fields.h"

namespace trnsim::hw {

// `runnable`: the dtypes TensorE runs; tensor_per_mac must give each of them.
EnergySpec read_energy(YamlMap m, const std::set<numerics::DType>& runnable);
SystemEnergySpec read_system_energy(YamlMap m);
// A rack, for rack power caps (hw/power_cap.h), from a system's `energy:` block: instances in
// it and what it draws beyond them (switches, power shelves, fans). 0 instances: none given.
struct RackSpec {
  int instances_per_rack = 0;
  Watts overhead_power;
};
RackSpec read_rack(YamlMap& m);

// `operating_points:` [{clock_scale, voltage_scale}, ...], the top point {1, 1} first, falling.
std::vector<OperatingPoint> read_operating_points(YamlMap& m);

// The chip at clock scale f of its published clocks (whatever scale `chip` is at now) (TensorE, VectorE, ScalarE, GpSimd; HBM,
// DMA and links keep theirs) and the voltage the operating points give for f. UnsupportedError
// outside the operating points.
ChipSpec at_clock_scale(ChipSpec chip, double f);

}  // namespace trnsim::hw
