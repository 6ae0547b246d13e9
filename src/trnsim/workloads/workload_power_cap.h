// A chip power cap on an LLM workload (llm, serve, train): the highest engine clock scale at
// which the chips' average power while busy fits the cap, found by hw::throttle_to_cap with
// the workload itself, re-costed at each candidate clock, as the measurement. Trainium systems
// only (the GPU baseline has no DVFS model).
#pragma once
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "trnsim/hw/power_cap.h"

namespace trnsim::workloads {

// `measure(clock_scale)`: the workload's busy time and the energy of one of its chips in it.
// Starts from `clock_scale` (the deployment's --clock-scale). ConfigError for cap <= 0,
// UnsupportedError on a GPU system; a cap below the lowest operating point's power is a
// warning on stderr (the result says met: false).
hw::Throttle throttle_workload(const std::string& system, double clock_scale, double cap_w,
                               const std::function<hw::PowerMeasure(double clock_scale)>& measure);

// {"cap_w", "met", "clock_scale", "voltage_scale", "power_w", "unthrottled_power_w",
//  "unthrottled_time_s", "time_s", "searched_runs"} of a search.
nlohmann::json power_cap_json(const hw::Throttle& t, double cap_w);

}  // namespace trnsim::workloads
