#include "trnsim/runtime/report_json.h"

#include <fmt/format.h>

#include <algorithm>

#include "trnsim/runtime/op_table_text.h"
#include "trnsim/common/json_text.h"

namespace trnsim::runtime {

nlohmann::json report_json(const Report& r, int64_t batch) {
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& o : r.ops)
    ops.push_back({{"name", o.node}, {"op", o.op}, {"fused", o.fused}, {"time_s", o.time_s},
                   {"instructions", o.instructions}, {"tensor_flops", o.tensor_flops}, {"hbm_bytes", o.hbm_bytes},
                   {"start_s", o.start_s}, {"end_s", o.end_s}, {"overlap_s", o.overlap_s}});
  nlohmann::json engines = nlohmann::json::object();
  for (const auto& e : r.engines) engines[e.engine] = {{"busy_s", e.busy_s}, {"utilisation", e.utilisation}};
  const bool e = !r.energy_by_unit_j.empty();
  using nlohmann::json;
  return {{"kind", "run"},  // what `trnsim report` draws it as
          {"chip", r.chip},
          {"mode", r.mode},
          {"energy_j", e ? json(r.energy_j) : json(nullptr)},
          {"average_power_w", e && r.time_s > 0 ? json(r.energy_j / r.time_s) : json(nullptr)},
          {"peak_power_w", e ? json(r.peak_power_w) : json(nullptr)},
          {"energy_by_unit_j", e ? json(r.energy_by_unit_j) : json(nullptr)},
          {"time_s", r.time_s},
          {"throughput_per_s", r.time_s > 0 ? static_cast<double>(batch) / r.time_s : 0.0},
          {"compile_time_s", r.compile_time_s},
          {"sim_wall_s", r.sim_wall_s},
          {"ops", ops},
          {"engines", engines},
          {"hbm_bytes", r.hbm_bytes},
          {"tensor_flops", r.tensor_flops},
          {"overlap_s", r.overlap_s},
          {"prefetched_loads", r.prefetched_loads},
          {"instructions", r.instructions},
          {"hbm_plan", {{"weight_bytes", r.hbm_plan.weight_bytes}, {"io_bytes", r.hbm_plan.io_bytes},
                        {"peak_activation_bytes", r.hbm_plan.peak_activation_bytes}, {"capacity_bytes", r.hbm_plan.capacity_bytes}}}};
}

std::string report_table(const Report& r, int64_t batch, size_t top_ops) {
  std::string s;
  s += fmt::format("chip {}  mode {}\n", r.chip, r.mode);
  s += fmt::format("latency      {:.3f} us\n", r.time_s * 1e6);
  if (r.time_s > 0) s += fmt::format("throughput   {:.1f} inferences/s (batch {})\n", static_cast<double>(batch) / r.time_s, batch);
  s += fmt::format("compile      {:.2f} ms   simulation (host) {:.3f} s\n", r.compile_time_s * 1e3, r.sim_wall_s);
  s += fmt::format("HBM traffic  {:.3f} MB ({:.1f} GB/s)   weights {:.3f} MB, peak activations {:.3f} MB\n", r.hbm_bytes / 1e6,
                   r.time_s > 0 ? r.hbm_bytes / r.time_s / 1e9 : 0.0, static_cast<double>(r.hbm_plan.weight_bytes) / 1e6,
                   static_cast<double>(r.hbm_plan.peak_activation_bytes) / 1e6);
  s += fmt::format("TensorE      {:.3f} GFLOP ({:.2f} TFLOP/s)\n", r.tensor_flops / 1e9, r.time_s > 0 ? r.tensor_flops / r.time_s / 1e12 : 0.0);
  if (r.overlap_s > 0)
    s += fmt::format("overlap      {:.3f} us of op spans ran under earlier ops ({} loads prefetched)\n", r.overlap_s * 1e6, r.prefetched_loads);
  if (!r.energy_by_unit_j.empty() && r.time_s > 0)
    s += fmt::format("energy       {:.4g} J ({:.1f} W average, {:.1f} W peak)\n", r.energy_j, r.energy_j / r.time_s,
                     r.peak_power_w);
  s += "engine utilisation\n";
  for (const auto& e : r.engines) s += fmt::format("  {:<8} {:6.1f}%  busy {:.3f} us\n", e.engine, e.utilisation * 100, e.busy_s * 1e6);
  return s + op_table_text(r.ops, r.time_s, top_ops, "per-op breakdown");
}

void write_timeline_trace(std::ostream& out, const Report& r) {
  nlohmann::json ev = nlohmann::json::array();
  for (const auto& e : r.timeline)
    ev.push_back({{"name", e.name}, {"ph", "X"}, {"ts", e.start_s * 1e6}, {"dur", (e.end_s - e.start_s) * 1e6},
                  {"pid", e.unit.core}, {"tid", e.unit.name()}, {"args", {{"op", e.op_node}}}});
  for (const auto& [t, w] : r.power_w)  // the chip's power counter track
    ev.push_back({{"name", "power (W)"}, {"ph", "C"}, {"ts", t * 1e6}, {"pid", 0}, {"args", {{"W", w}}}});
  if (!r.power_w.empty())
    ev.push_back({{"name", "power (W)"}, {"ph", "C"}, {"ts", r.time_s * 1e6}, {"pid", 0}, {"args", {{"W", 0}}}});
  out << json_text(nlohmann::json{{"traceEvents", ev}, {"displayTimeUnit", "ns"}}) << "\n";
}

}  // namespace trnsim::runtime
