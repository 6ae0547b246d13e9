// Reads configs/gpus/*.yaml: a GPU (`kind: gpu`) or a GPU system (`kind: gpu_system`, whose
// `gpu:` names a GPU preset or a file next to it). Same checks and error format as the
// Trainium files (yaml_fields.h).
#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/hw/energy_loader.h"
#include "trnsim/hw/gpu_spec.h"
#include "trnsim/hw/preset_registry.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/hw/system_fields.h"
#include "trnsim/hw/yaml_fields.h"

namespace trnsim::hw {
namespace {

GpuEfficiency read_efficiency(YamlMap m) {
  GpuEfficiency e;
  e.gemm_max = m.number("gemm_max");
  e.gemm_half_rows = m.number("gemm_half_rows");
  e.attention = m.number("attention");
  e.memory = m.number("memory");
  e.nvlink = m.number("nvlink");
  e.kernel_launch = m.quantity<Nanoseconds>("kernel_launch");
  e.kernels_per_layer = m.integer("kernels_per_layer");
  e.collective_latency = m.quantity<Nanoseconds>("collective_latency");
  e.step_overhead = m.quantity<Nanoseconds>("step_overhead");
  for (auto [k, v] : {std::pair{"gemm_max", e.gemm_max}, {"attention", e.attention}, {"memory", e.memory}, {"nvlink", e.nvlink}})
    if (v > 1) m.fail_key(k, "a fraction of the peak, at most 1");
  m.done();
  return e;
}

GpuSpec parse_gpu(const std::string& yaml, const std::string& source) {
  YamlMap m(parse_yaml(yaml, source), source, "",
            {"kind", "name", "display_name", "dense_tflops", "hbm", "nvlink_bandwidth", "power", "boost_clock", "efficiency",
             "energy"});
  if (m.text("kind") != "gpu") m.fail_key("kind", "gpu (a GPU system file says gpu_system)");
  GpuSpec g;
  g.source_file = source;
  g.name = m.text("name");
  g.display_name = m.text("display_name");
  YamlMap peaks = m.any_map("dense_tflops");
  for (auto& [k, v] : peaks.entries())
    g.dense_tflops[peaks.dtype_at(k, peaks.field(k.Scalar()))] =
        TFlops(peaks.quantity_at(v, peaks.field(k.Scalar()), Dimension::Compute));
  if (!g.dense_tflops.count(numerics::DType::BF16)) m.fail_key("dense_tflops", "a bf16 entry");
  YamlMap hbm = m.map("hbm", {"capacity", "bandwidth"});
  g.hbm.capacity = hbm.quantity<Bytes>("capacity");
  g.hbm.bandwidth = hbm.quantity<GBps>("bandwidth");
  hbm.done();
  g.nvlink_bandwidth = m.quantity<GBps>("nvlink_bandwidth");
  g.power = m.quantity<Watts>("power");
  g.boost_clock = m.quantity<GHz>("boost_clock");
  g.efficiency = read_efficiency(m.map("efficiency", {"gemm_max", "gemm_half_rows", "attention", "memory", "nvlink",
                                                      "kernel_launch", "kernels_per_layer", "collective_latency",
                                                      "step_overhead"}));
  YamlMap e = m.map("energy", {"static_power", "per_flop", "hbm_per_byte", "nvlink_per_byte", "operating_points"});
  g.energy.static_power = e.quantity<Watts>("static_power");
  g.energy.per_flop = e.quantity<Joules>("per_flop");
  g.energy.hbm_per_byte = e.quantity<Joules>("hbm_per_byte");
  g.energy.nvlink_per_byte = e.quantity<Joules>("nvlink_per_byte");
  g.energy.operating_points = read_operating_points(e);
  e.done();
  m.done();
  return g;
}

std::string gpu_text(std::string_view name_or_path, std::string& source) {
  if (is_path(name_or_path)) {
    source = std::string(name_or_path);
    return read_config_file(std::filesystem::path(name_or_path));
  }
  if (auto* f = find_preset(PresetKind::Gpu, name_or_path)) {
    source = preset_source(*f);
    return std::string(f->text);
  }
  throw ConfigError(fmt::format("no GPU preset named '{}' (GPU presets: {})", name_or_path, preset_list(PresetKind::Gpu)));
}

}  // namespace

TFlops GpuSpec::peak(numerics::DType t) const {
  auto it = dense_tflops.find(t);
  if (it == dense_tflops.end())
    throw UnsupportedError(fmt::format("{} has no published dense {} peak", display_name, numerics::name(t)));
  return it->second;
}

bool is_gpu_system(std::string_view name_or_path) {
  if (!is_path(name_or_path) && !find_preset(PresetKind::Gpu, name_or_path)) return false;
  std::string source;
  const YAML::Node n = parse_yaml(gpu_text(name_or_path, source), source);
  return n.IsMap() && n["kind"] && n["kind"].as<std::string>("") == "gpu_system";
}

GpuSpec load_gpu(std::string_view name_or_path) {
  std::string source;
  const std::string text = gpu_text(name_or_path, source);
  return parse_gpu(text, source);
}

GpuSystemSpec load_gpu_system(std::string_view name_or_path) {
  std::string source;
  const std::string text = gpu_text(name_or_path, source);
  YamlMap m(parse_yaml(text, source), source, "",
            {"kind", "name", "gpu", "gpus", "gpus_per_instance", "nvlink_domain", "scale_out", "price",
             "price_reserved", "energy", "tco"});
  if (m.text("kind") != "gpu_system") m.fail_key("kind", "gpu_system (a GPU file says gpu)");
  GpuSystemSpec s;
  s.source_file = source;
  s.name = m.text("name");
  std::string ref = m.text("gpu");
  if (is_path(ref) && is_path(name_or_path))
    ref = (std::filesystem::path(name_or_path).parent_path() / ref).string();
  s.gpu = load_gpu(ref);
  s.gpus = m.integer("gpus");
  s.gpus_per_instance = m.integer("gpus_per_instance");
  s.nvlink_domain = m.integer("nvlink_domain");
  if (s.gpus % s.gpus_per_instance) m.fail_key("gpus_per_instance", fmt::format("a divisor of gpus ({})", s.gpus));
  if (s.nvlink_domain > s.gpus) m.fail_key("nvlink_domain", fmt::format("at most gpus ({})", s.gpus));
  s.scale_out = read_scale_out(m.map("scale_out", {"kind", "bandwidth_per_instance", "latency"}));
  s.price = m.optional_quantity<UsdPerHour>("price");
  s.price_reserved = m.optional_quantity<UsdPerHour>("price_reserved");
  s.energy = read_system_energy(m.map("energy", {"host_power_per_instance", "switch_per_byte", "scale_out_per_byte", "instances_per_rack", "rack_overhead_power"}));
  s.tco = read_tco(m.map("tco", {"capex_per_chip", "capex_per_instance", "network_per_instance", "maintenance_per_year"}));
  m.done();
  return s;
}

GpuSystemSpec gpu_at_clock_scale(GpuSystemSpec s, double f) {
  GpuEnergy& e = s.gpu.energy;
  EnergySpec curve;
  curve.operating_points = e.operating_points;
  const double v = curve.voltage_at(f), k = f / e.clock_scale, kv = v / e.voltage_scale;
  for (auto& [t, peak] : s.gpu.dense_tflops) peak = peak * k;
  e.per_flop = e.per_flop * (kv * kv);
  e.static_power = e.static_power * kv;
  e.clock_scale = f;
  e.voltage_scale = v;
  return s;
}

}  // namespace trnsim::hw
