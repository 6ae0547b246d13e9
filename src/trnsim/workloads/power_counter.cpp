#include "trnsim/workloads/power_counter.h"

namespace trnsim::workloads {

void add_power_counter(nlohmann::json& trace, const std::vector<PowerSpan>& spans, int pid, const std::string& process) {
  using nlohmann::json;
  json& ev = trace["traceEvents"];
  ev.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", process}}}});
  auto counter = [&](double t_s, double w, double per_chip) {
    ev.push_back({{"name", "power"}, {"ph", "C"}, {"pid", pid}, {"ts", t_s * 1e6},
                  {"args", {{"power_w", w}, {"per_chip_w", per_chip}}}});
  };
  double end = 0;
  for (const auto& s : spans) {
    if (!(s.t1_s > s.t0_s)) continue;  // nothing to hold
    const double w = s.energy_j / (s.t1_s - s.t0_s);
    counter(s.t0_s, w, s.chips > 0 ? w / s.chips : 0.0);
    end = s.t1_s;
  }
  if (end > 0) counter(end, 0, 0);
}

}  // namespace trnsim::workloads
