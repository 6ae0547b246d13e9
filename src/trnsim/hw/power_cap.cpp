#include "trnsim/hw/power_cap.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/hw/energy_loader.h"

namespace trnsim::hw {

Throttle throttle_to_cap(const ChipSpec& chip, Watts cap, const std::function<PowerMeasure(const ChipSpec&)>& measure,
                         double tolerance) {
  if (!chip.energy.modelled) throw UnsupportedError(fmt::format("--power-cap: chip {} has no energy model", chip.name));
  if (!(cap.value() > 0)) throw ConfigError(fmt::format("power cap must be positive, got {} W", cap.value()));
  Throttle t;
  t.clock_scale = chip.energy.clock_scale;
  t.voltage_scale = chip.energy.voltage_scale;
  t.at_top = t.at_scale = measure(chip);
  t.runs = 1;
  if (t.at_top.power_w() <= cap.value()) return t;
  double lo = chip.energy.min_clock_scale(), hi = chip.energy.clock_scale;
  PowerMeasure low = measure(at_clock_scale(chip, lo));
  ++t.runs;
  if (low.power_w() > cap.value()) {
    t.met = false;
    t.clock_scale = lo;
    t.voltage_scale = chip.energy.voltage_at(lo);
    t.at_scale = low;
    return t;
  }
  t.clock_scale = lo;
  t.at_scale = low;
  // Invariant: power(lo) <= cap < power(hi). Stop once power(lo) is within tolerance of the cap.
  for (int i = 0; i < 40 && low.power_w() < cap.value() * (1 - tolerance); ++i) {
    const double mid = 0.5 * (lo + hi);
    const PowerMeasure m = measure(at_clock_scale(chip, mid));
    ++t.runs;
    if (m.power_w() <= cap.value()) {
      lo = mid;
      low = m;
    } else {
      hi = mid;
    }
  }
  t.clock_scale = lo;
  t.voltage_scale = chip.energy.voltage_at(lo);
  t.at_scale = low;
  return t;
}

Watts chip_cap(const SystemSpec& s, const std::string& scope, Watts cap, int rack_instances) {
  if (scope == "chip") return cap;
  int instances = 1;
  if (scope == "rack") instances = rack_instances;
  else if (scope != "instance") throw ConfigError(fmt::format("power-cap scope '{}': expected chip, instance or rack", scope));
  const double hosts = s.energy.host_power_per_instance.value() * instances;
  const double chips = static_cast<double>(s.chips_per_instance) * instances;
  if (cap.value() <= hosts)
    throw ConfigError(fmt::format("a {} W cap on a {} of {} leaves nothing for the chips: its hosts draw {} W", cap.value(),
                                  scope, s.name, hosts));
  return Watts((cap.value() - hosts) / chips);
}

}  // namespace trnsim::hw
