// The operating point a model runs at: --clock-scale, or a --power-cap on a chip, an instance
// or a rack of --system (hw::CapScope), found by timing-only runs of the whole model at
// candidate clocks (hw::throttle_to_cap). Shared by `trnsim run` and CompiledModel.run.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "trnsim/compiler/compiled_model.h"
#include "trnsim/hw/power_cap.h"

namespace trnsim::runtime {

struct RunPowerOptions {
  double clock_scale = 1;
  double power_cap_w = 0;        // 0: none
  std::string scope = "chip";    // chip | instance | rack (instance and rack need `system`)
  std::string system;            // a system preset or file: its hosts' and rack's power
};

struct RunPower {
  hw::ChipSpec chip;             // at the chosen operating point
  hw::Throttle throttle;         // the search, when capped
  hw::CapScope scope;
  bool capped = false;
  // {"cap_w", "scope", "chips_in_scope", "fixed_power_w", "chip_cap_w", "met", "clock_scale",
  //  "voltage_scale", "power_w", "scope_power_w", "unthrottled_power_w", "unthrottled_time_s",
  //  "time_s", "searched_runs"}
  nlohmann::json json() const;
};

RunPower run_power(const compiler::CompiledModel& cm, const hw::ChipSpec& chip, const RunPowerOptions& o);

}  // namespace trnsim::runtime
