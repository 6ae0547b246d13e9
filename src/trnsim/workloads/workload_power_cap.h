// A power cap on an LLM workload (llm, serve, train): the highest engine clock scale at which
// the chips' average power while busy fits the cap, found by hw::throttle_clock with the
// workload itself, re-costed at each candidate clock, as the measurement. The cap holds for a
// chip, an instance or a rack (hw::CapScope: less the hosts' and the rack's fixed power, the
// rest shared by the chips). Trainium systems over their chips' operating points; GPU systems
// over the GPU's SM clock (hw::gpu_at_clock_scale).
#pragma once
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "trnsim/hw/power_cap.h"

namespace trnsim::workloads {

struct PowerCap {
  double watts = 0;             // 0: none
  std::string scope = "chip";   // chip | instance | rack
};

struct WorkloadThrottle {
  hw::Throttle throttle;
  hw::CapScope scope;
};

// The cap's scope on a system (Trainium or GPU): ConfigError for a bad scope or cap.
hw::CapScope workload_cap_scope(const std::string& system, const PowerCap& cap);

// `measure(clock_scale)`: the workload's busy time and the energy of one of its chips in it.
// Starts from `clock_scale` (the deployment's --clock-scale). ConfigError for cap <= 0 or a bad
// scope; a cap below the lowest operating point's power is a warning on stderr (met: false).
WorkloadThrottle throttle_workload(const std::string& system, double clock_scale, const PowerCap& cap,
                                   const std::function<hw::PowerMeasure(double clock_scale)>& measure);

// {"cap_w", "scope", "chips_in_scope", "fixed_power_w", "chip_cap_w", "met", "clock_scale",
//  "voltage_scale", "power_w" (per chip), "scope_power_w", "time_s", "unthrottled_power_w",
//  "unthrottled_scope_power_w", "unthrottled_time_s", "searched_runs"} of a search.
nlohmann::json power_cap_json(const WorkloadThrottle& t);

// One line for a table: "power cap 250 W per chip: clock scale 0.78 (voltage 0.87), ..." from
// power_cap_json's object.
std::string power_cap_line(const nlohmann::json& pc);


}  // namespace trnsim::workloads
