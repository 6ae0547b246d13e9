#include "trnsim/runtime/run_power_cap.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/hw/energy_loader.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/loaded_model.h"

namespace trnsim::runtime {

RunPower run_power(const compiler::CompiledModel& cm, const hw::ChipSpec& chip, const RunPowerOptions& o) {
  RunPower p{o.clock_scale != 1 ? hw::at_clock_scale(chip, o.clock_scale) : chip, {}, {}, false};
  hw::check_power_cap(o.power_cap_w);
  hw::check_power_cap_scope(o.scope);
  if (o.power_cap_w == 0) return p;
  if (o.scope != "chip" && o.system.empty())
    throw ConfigError(fmt::format("--power-cap-scope {} needs --system (its hosts' power)", o.scope));
  if (o.scope == "chip") p.scope = hw::cap_scope({}, "chip", Watts(o.power_cap_w));
  else p.scope = hw::cap_scope(hw::scope_sizes(hw::load_system(o.system)), o.scope, Watts(o.power_cap_w));
  auto measure = [&](const hw::ChipSpec& c) {
    LoadedModel lm(cm, c);
    const Report r = lm.run({}, core::Mode::Timing).report;
    return hw::PowerMeasure{r.time_s, r.energy_j};
  };
  p.throttle = hw::throttle_to_cap(p.chip, Watts(p.scope.chip_cap_w()), measure);
  if (!p.throttle.met)
    fmt::print(stderr, "trnsim: warning: {:g} W per chip is below its power at the lowest operating point ({:.1f} W)\n",
               p.scope.chip_cap_w(), p.throttle.at_scale.power_w());
  p.chip = hw::at_clock_scale(p.chip, p.throttle.clock_scale);
  p.capped = true;
  return p;
}

nlohmann::json RunPower::json() const {
  return {{"cap_w", scope.cap_w},
          {"scope", scope.scope},
          {"chips_in_scope", scope.chips},
          {"instances_in_scope", scope.instances},
          {"fixed_power_w", scope.fixed_w},
          {"chip_cap_w", scope.chip_cap_w()},
          {"met", throttle.met},
          {"clock_scale", throttle.clock_scale},
          {"voltage_scale", throttle.voltage_scale},
          {"power_w", throttle.at_scale.power_w()},
          {"scope_power_w", scope.power_w(throttle.at_scale.power_w())},
          {"time_s", throttle.at_scale.time_s},
          {"unthrottled_power_w", throttle.at_top.power_w()},
          {"unthrottled_scope_power_w", scope.power_w(throttle.at_top.power_w())},
          {"unthrottled_time_s", throttle.at_top.time_s},
          {"searched_runs", throttle.runs}};
}

}  // namespace trnsim::runtime
