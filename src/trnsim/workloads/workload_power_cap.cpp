#include "trnsim/workloads/workload_power_cap.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/hw/energy_loader.h"
#include "trnsim/hw/gpu_spec.h"
#include "trnsim/hw/spec_loader.h"

namespace trnsim::workloads {
namespace {

hw::ScopeSizes gpu_scope_sizes(const hw::GpuSystemSpec& s) {
  const hw::RackSpec r = hw::load_rack(s.source_file.starts_with("preset:") ? std::string_view(s.name)
                                                                            : std::string_view(s.source_file));
  return {s.name, s.gpus_per_instance, s.energy.host_power_per_instance.value(), r.instances_per_rack,
          r.overhead_power.value()};
}

}  // namespace

hw::CapScope workload_cap_scope(const std::string& system, const PowerCap& cap) {
  hw::check_power_cap_scope(cap.scope);
  const hw::ScopeSizes z = hw::is_gpu_system(system) ? gpu_scope_sizes(hw::load_gpu_system(system))
                                                     : hw::scope_sizes(hw::load_system(system));
  return hw::cap_scope(z, cap.scope, Watts(cap.watts));
}

WorkloadThrottle throttle_workload(const std::string& system, double clock_scale, const PowerCap& cap,
                                   const std::function<hw::PowerMeasure(double)>& measure) {
  if (!(cap.watts > 0)) throw ConfigError(fmt::format("--power-cap: {} W; expected > 0", cap.watts));
  WorkloadThrottle w;
  w.scope = workload_cap_scope(system, cap);
  hw::DvfsRange range{clock_scale, {}};
  if (hw::is_gpu_system(system)) {
    range.points = hw::load_gpu_system(system).gpu.energy.operating_points;
  } else {
    const hw::ChipSpec chip = hw::load_system(system).chip;
    if (!chip.energy.modelled) throw UnsupportedError(fmt::format("--power-cap: chip {} has no energy model", chip.name));
    range.points = chip.energy.operating_points;
  }
  range.voltage_at(clock_scale);  // the starting clock is an operating point
  w.throttle = hw::throttle_clock(range, Watts(w.scope.chip_cap_w()), measure);
  if (!w.throttle.met)
    fmt::print(stderr, "trnsim: warning: --power-cap {:g} W ({}: {:.1f} W per chip) is below the chips' power at the "
                       "lowest operating point ({:.1f} W); running there\n", cap.watts, cap.scope, w.scope.chip_cap_w(),
               w.throttle.at_scale.power_w());
  return w;
}

nlohmann::json power_cap_json(const WorkloadThrottle& w) {
  const hw::Throttle& t = w.throttle;
  return {{"cap_w", w.scope.cap_w},
          {"scope", w.scope.scope},
          {"chips_in_scope", w.scope.chips},
          {"instances_in_scope", w.scope.instances},
          {"fixed_power_w", w.scope.fixed_w},
          {"chip_cap_w", w.scope.chip_cap_w()},
          {"met", t.met},
          {"clock_scale", t.clock_scale},
          {"voltage_scale", t.voltage_scale},
          {"power_w", t.at_scale.power_w()},
          {"scope_power_w", w.scope.power_w(t.at_scale.power_w())},
          {"time_s", t.at_scale.time_s},
          {"unthrottled_power_w", t.at_top.power_w()},
          {"unthrottled_scope_power_w", w.scope.power_w(t.at_top.power_w())},
          {"unthrottled_time_s", t.at_top.time_s},
          {"searched_runs", t.runs}};
}

std::string power_cap_line(const nlohmann::json& pc) {
  const std::string scope = pc.at("scope").get<std::string>();
  const std::string what =
      scope == "chip" ? "per chip"
                      : fmt::format("per {} ({} chips, {:g} W fixed: {:.1f} W per chip)", scope, pc.at("chips_in_scope").get<int>(),
                                    pc.at("fixed_power_w").get<double>(), pc.at("chip_cap_w").get<double>());
  return fmt::format("power cap {:g} W {}: clock scale {:.4f} (voltage {:.4f}), {:.1f} W -> {:.1f} W per chip{}, "
                     "time {:.4g} s -> {:.4g} s, {} runs{}",
                     pc.at("cap_w").get<double>(), what, pc.at("clock_scale").get<double>(),
                     pc.at("voltage_scale").get<double>(), pc.at("unthrottled_power_w").get<double>(),
                     pc.at("power_w").get<double>(),
                     scope == "chip" ? "" : fmt::format(" ({:.0f} W -> {:.0f} W per {})", pc.at("unthrottled_scope_power_w").get<double>(),
                                                        pc.at("scope_power_w").get<double>(), scope),
                     pc.at("unthrottled_time_s").get<double>(), pc.at("time_s").get<double>(),
                     pc.at("searched_runs").get<int>(), pc.at("met").get<bool>() ? "" : " (CAP NOT MET at the lowest operating point)");
}

}  // namespace trnsim::workloads
