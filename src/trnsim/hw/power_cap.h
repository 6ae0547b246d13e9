// Power capping by DVFS: the highest clock scale whose average chip power stays within a cap,
// as a chip's power manager settles on it, found by bisection over the operating points with
// the caller's simulation as the measurement. Power falls with the clock (fewer operations per
// second, each at a lower voltage), so the search is monotone. A cap for an instance or a rack
// turns into a chip cap after the hosts' power (chip_cap).
#pragma once
#include <functional>
#include <string>

#include "trnsim/hw/chip_spec.h"

namespace trnsim::hw {

struct PowerMeasure {
  double time_s = 0;
  double energy_j = 0;  // of one chip
  double power_w() const { return time_s > 0 ? energy_j / time_s : 0; }
};

struct Throttle {
  double clock_scale = 1;
  double voltage_scale = 1;
  PowerMeasure at_top;     // unthrottled
  PowerMeasure at_scale;   // at clock_scale
  int runs = 0;            // simulations the search took
  bool met = true;         // false: even the lowest operating point exceeds the cap
};

// Within `tolerance` (relative) under the cap, or the top point when it is already under.
Throttle throttle_to_cap(const ChipSpec& chip, Watts cap, const std::function<PowerMeasure(const ChipSpec&)>& measure,
                         double tolerance = 0.005);

// The per-chip cap of a cap on `scope` ("chip", "instance", "rack": `rack_instances` instances)
// after the hosts' power. ConfigError when the hosts alone exceed it.
Watts chip_cap(const SystemSpec& system, const std::string& scope, Watts cap, int rack_instances = 1);

}  // namespace trnsim::hw
