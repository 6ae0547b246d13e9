// The summary as JSON. Keys carry their unit (time_s, bandwidth_gbps, hbm_bytes, ...), so a
// reader never has to guess; the headline figures are flat at the top level.
#include <string>

#include "trnsim/report/summary.h"

namespace trnsim::report {

nlohmann::json to_json(const RunSummary& s) {
  nlohmann::json j;
  j["kind"] = "kernel";  // what `trnsim report` draws it as
  j["time_s"] = s.time_s;
  j["program"] = s.program;
  j["chip"] = s.chip;
  j["cores_used"] = s.cores_used;
  j["instructions"] = s.instructions;
  j["events"] = s.events;

  j["matmul_dtype"] = s.has_matmul ? nlohmann::json(std::string(numerics::name(s.matmul_dtype)))
                                   : nlohmann::json(nullptr);
  j["tensor_flops"] = s.tensor_flops;
  j["tflops"] = s.tflops;
  j["peak_tflops"] = s.peak_tflops;
  j["peak_fraction"] = s.peak_fraction;

  j["hbm_bytes"] = s.hbm_bytes;
  j["bandwidth_gbps"] = s.bandwidth_gbps;
  j["hbm_bandwidth_gbps"] = s.hbm_bandwidth_gbps;
  j["dma_bandwidth_gbps"] = s.dma_bandwidth_gbps;
  j["bandwidth_fraction"] = s.bandwidth_fraction;

  j["arithmetic_intensity_flop_per_byte"] = s.arithmetic_intensity;
  j["roofline_knee_flop_per_byte"] = s.roofline_knee;
  j["bound"] = s.bound.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.bound);

  auto& units = j["units"] = nlohmann::json::array();
  for (const auto& u : s.units) {
    units.push_back({{"unit", u.unit},
                     {"core", u.core},
                     {"engine", std::string(isa::engine_name(u.engine))},
                     {"queue", u.queue},
                     {"busy_s", u.busy_s},
                     {"utilisation", u.utilisation},
                     {"instructions", u.instructions},
                     {"flops", u.flops},
                     {"bytes", u.bytes},
                     {"energy_j", u.energy_j}});
  }
  j["dma_active_fraction"] = s.dma_active;
  j["instruction_counts"] = {{"by_opcode", s.opcode_counts}, {"by_engine", s.engine_counts}};
  add_energy_json(j, s.energy);
  return j;
}

void add_energy_json(nlohmann::json& j, const EnergySummary& e) {
  using nlohmann::json;
  j["energy_j"] = e.modelled ? json(e.energy_j) : json(nullptr);
  j["average_power_w"] = e.modelled ? json(e.average_power_w) : json(nullptr);
  j["peak_power_w"] = e.modelled ? json(e.peak_power_w) : json(nullptr);
  j["energy_by_unit_j"] = e.modelled ? json(e.by_unit_j) : json(nullptr);
}

}  // namespace trnsim::report
