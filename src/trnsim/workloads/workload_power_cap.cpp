#include "trnsim/workloads/workload_power_cap.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/hw/energy_loader.h"
#include "trnsim/hw/gpu_spec.h"
#include "trnsim/hw/spec_loader.h"

namespace trnsim::workloads {

hw::Throttle throttle_workload(const std::string& system, double clock_scale, double cap_w,
                               const std::function<hw::PowerMeasure(double)>& measure) {
  if (!(cap_w > 0)) throw ConfigError(fmt::format("--power-cap: {} W; expected > 0", cap_w));
  if (hw::is_gpu_system(system)) throw UnsupportedError("unsupported: --power-cap on a GPU system (Trainium chips only)");
  hw::ChipSpec chip = hw::load_system(system).chip;
  if (clock_scale != 1) chip = hw::at_clock_scale(chip, clock_scale);
  const hw::Throttle t =
      hw::throttle_to_cap(chip, Watts(cap_w), [&](const hw::ChipSpec& c) { return measure(c.energy.clock_scale); });
  if (!t.met)
    fmt::print(stderr, "trnsim: warning: --power-cap {:g} W is below the chips' power at the lowest operating point "
                       "({:.1f} W); running there\n", cap_w, t.at_scale.power_w());
  return t;
}

nlohmann::json power_cap_json(const hw::Throttle& t, double cap_w) {
  return {{"cap_w", cap_w},
          {"met", t.met},
          {"clock_scale", t.clock_scale},
          {"voltage_scale", t.voltage_scale},
          {"power_w", t.at_scale.power_w()},
          {"time_s", t.at_scale.time_s},
          {"unthrottled_power_w", t.at_top.power_w()},
          {"unthrottled_time_s", t.at_top.time_s},
          {"searched_runs", t.runs}};
}

}  // namespace trnsim::workloads
