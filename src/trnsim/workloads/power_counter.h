// A power counter track for a Chrome / Perfetto trace ("ph": "C" events): the power of a set
// of chips over time, span by span, each span's energy spread evenly over it. Integrating the
// counter (each value held until the next event) gives back the spans' energy exactly.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trnsim::workloads {

struct PowerSpan {
  double t0_s = 0, t1_s = 0;
  double energy_j = 0;   // of all the chips
  double chips = 1;      // chips drawing it (per_chip_w = power / chips)
};

// Appends to trace["traceEvents"] a process `pid` named `process` with a counter "power" whose
// args are {"power_w": all chips, "per_chip_w"} at each span's start, and 0 after the last.
void add_power_counter(nlohmann::json& trace, const std::vector<PowerSpan>& spans, int pid, const std::string& process);

}  // namespace trnsim::workloads
