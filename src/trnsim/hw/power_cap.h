// Power capping by DVFS: the highest clock scale whose average chip power stays within a cap,
// as a chip's power manager settles on it, found by bisection over the operating points with
// the caller's simulation as the measurement. Power falls with the clock (fewer operations per
// second, each at a lower voltage), so the search is monotone. A cap for an instance or a rack
// turns into a chip cap after the power that does not throttle (hosts, rack overhead: CapScope).
#pragma once
#include <functional>
#include <string>
#include <vector>

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

// The clocks a search may choose: from `top` (the clock scale the part runs at now) down to the
// lowest operating point, and the voltage at each.
struct DvfsRange {
  double top = 1;
  std::vector<OperatingPoint> points;  // top first, as in a config file
  double min_clock_scale() const { return points.empty() ? 1.0 : points.back().clock_scale; }
  double voltage_at(double clock_scale) const;
};

// A run's --power-cap in W: 0 is none; a negative cap is a ConfigError naming it (it
// was taken as none without a word). `throttle_workload` wants a cap, so it refuses 0 too.
void check_power_cap(double watts);
// A --power-cap-scope / power_cap_scope: chip, instance or rack, else a ConfigError naming it.
// Checked whether or not a cap is given (a scope nobody uses was taken without a word).
std::string check_power_cap_scope(const std::string& scope);

// Within `tolerance` (relative) under the cap, or the top point when it is already under.
// `measure(f)`: one chip's busy time and energy at clock scale f.
Throttle throttle_clock(const DvfsRange& range, Watts cap, const std::function<PowerMeasure(double)>& measure,
                        double tolerance = 0.005);
Throttle throttle_to_cap(const ChipSpec& chip, Watts cap, const std::function<PowerMeasure(const ChipSpec&)>& measure,
                         double tolerance = 0.005);

// What a cap on a chip, an instance or a rack covers: its chips and the power in it that the
// clocks do not move (hosts: CPUs, memory, NICs, fans, PSU losses; a rack's switches and power
// shelves). The chips share what is left equally (the same work on every chip).
struct CapScope {
  std::string scope = "chip";  // chip | instance | rack
  int instances = 0;           // in the scope (0 for a chip)
  int chips = 1;
  double fixed_w = 0;          // hosts (+ rack overhead)
  double cap_w = 0;
  double chip_cap_w() const { return (cap_w - fixed_w) / chips; }
  double power_w(double chip_w) const { return chip_w * chips + fixed_w; }  // the scope's draw
};

// The sizes a scope needs, from a system file (Trainium or GPU).
struct ScopeSizes {
  std::string system;
  int chips_per_instance = 1;
  double host_w = 0;              // per instance
  int instances_per_rack = 0;     // 0: the file gives none (a rack cap is then an error)
  double rack_overhead_w = 0;
};
ScopeSizes scope_sizes(const SystemSpec& s);
// The rack of a system preset or file (Trainium or GPU): its energy block's instances_per_rack
// and rack_overhead_power, {} when it gives none.
struct RackSpec;
RackSpec load_rack(std::string_view system);

// ConfigError for an unknown scope, a rack scope on a system without a rack, or a cap that the
// fixed power alone exceeds.
CapScope cap_scope(const ScopeSizes& sizes, const std::string& scope, Watts cap);

// The per-chip cap of a cap on `scope` ("chip", "instance", "rack") of a Trainium system.
Watts chip_cap(const SystemSpec& system, const std::string& scope, Watts cap);

}  // namespace trnsim::hw
