#include "trnsim/workloads/serve_energy_report.h"

#include <algorithm>

namespace trnsim::workloads {
namespace {

// The fleet's highest power over one timeline bin: the iterations' dynamic energy in the bin
// plus the static power of the replicas up at its end.
double peak_bin_power_w(const Timeline& t, double idle_w, double end_s) {
  double peak = 0;
  const auto& bins = t.bins();
  for (size_t i = 0; i < bins.size(); ++i) {
    const double w = std::min(t.bin_s(), end_s - static_cast<double>(i) * t.bin_s());
    if (w <= 0) break;
    peak = std::max(peak, bins[i].energy_j / w + idle_w * static_cast<double>(bins[i].replicas_up));
  }
  return peak;
}

}  // namespace

void add_serve_energy(nlohmann::json& j, const ServeOutcome& out, const ServeEnergyContext& e, int64_t output_tokens) {
  const ServeRecorder& rec = out.rec;
  const double chip_j = rec.energy_j, host_j = e.host_power_w * out.replica_seconds;
  const double server_j = chip_j + host_j, facility_j = server_j * e.pue;
  const double d = out.end_s > 0 ? out.end_s : 1;
  const double tokens = static_cast<double>(output_tokens);
  auto per = [](double x, double n) { return n > 0 ? x / n : 0.0; };
  j["energy_j"] = chip_j;
  j["energy_by_unit_j"] = rec.energy_by_unit.to_json();
  j["average_power_w"] = chip_j / d;
  j["peak_power_w"] = peak_bin_power_w(rec.timeline, e.idle_power_w, out.end_s);
  j["peak_iteration_power_w"] = rec.peak_iteration_power_w;
  j["idle_power_per_replica_w"] = e.idle_power_w;
  j["host_power_per_replica_w"] = e.host_power_w;
  j["host_energy_j"] = host_j;
  j["server_energy_j"] = server_j;
  j["pue"] = e.pue;
  j["facility_energy_j"] = facility_j;
  j["energy_per_request_j"] = per(chip_j, static_cast<double>(rec.completed));
  j["energy_per_output_token_j"] = per(chip_j, tokens);
  j["server_energy_per_output_token_j"] = per(server_j, tokens);
  j["facility_energy_per_output_token_j"] = per(facility_j, tokens);
  // tokens/s per W = tokens per J: x 10^6 per MW.
  j["output_tokens_per_s_per_mw_chip"] = per(tokens, chip_j) * 1e6;
  j["output_tokens_per_s_per_mw_server"] = per(tokens, server_j) * 1e6;
  j["output_tokens_per_s_per_mw_facility"] = per(tokens, facility_j) * 1e6;
}

}  // namespace trnsim::workloads
