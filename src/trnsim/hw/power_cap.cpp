#include "trnsim/hw/power_cap.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/hw/energy_loader.h"
#include "trnsim/hw/preset_registry.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/hw/yaml_fields.h"

namespace trnsim::hw {

void check_power_cap(double watts) {
  if (watts < 0) throw ConfigError(fmt::format("--power-cap {} W: expected a power > 0 (or leave it out)", watts));
}

std::string check_power_cap_scope(const std::string& scope) {
  if (scope != "chip" && scope != "instance" && scope != "rack")
    throw ConfigError(fmt::format("--power-cap-scope '{}': expected chip, instance or rack", scope));
  return scope;
}

double DvfsRange::voltage_at(double f) const {
  EnergySpec e;
  e.operating_points = points;
  return e.voltage_at(f);
}

Throttle throttle_clock(const DvfsRange& range, Watts cap, const std::function<PowerMeasure(double)>& measure,
                        double tolerance) {
  if (!(cap.value() > 0)) throw ConfigError(fmt::format("power cap must be positive, got {} W", cap.value()));
  Throttle t;
  t.clock_scale = range.top;
  t.voltage_scale = range.voltage_at(range.top);
  t.at_top = t.at_scale = measure(range.top);
  t.runs = 1;
  if (t.at_top.power_w() <= cap.value()) return t;
  double lo = range.min_clock_scale(), hi = range.top;
  PowerMeasure low = measure(lo);
  ++t.runs;
  t.clock_scale = lo;
  t.voltage_scale = range.voltage_at(lo);
  t.at_scale = low;
  if (low.power_w() > cap.value()) {
    t.met = false;
    return t;
  }
  // Invariant: power(lo) <= cap < power(hi). Stop once power(lo) is within tolerance of the cap.
  for (int i = 0; i < 40 && low.power_w() < cap.value() * (1 - tolerance); ++i) {
    const double mid = 0.5 * (lo + hi);
    const PowerMeasure m = measure(mid);
    ++t.runs;
    if (m.power_w() <= cap.value()) {
      lo = mid;
      low = m;
    } else {
      hi = mid;
    }
  }
  t.clock_scale = lo;
  t.voltage_scale = range.voltage_at(lo);
  t.at_scale = low;
  return t;
}

Throttle throttle_to_cap(const ChipSpec& chip, Watts cap, const std::function<PowerMeasure(const ChipSpec&)>& measure,
                         double tolerance) {
  if (!chip.energy.modelled) throw UnsupportedError(fmt::format("--power-cap: chip {} has no energy model", chip.name));
  const DvfsRange range{chip.energy.clock_scale, chip.energy.operating_points};
  return throttle_clock(range, cap, [&](double f) { return measure(f == chip.energy.clock_scale ? chip : at_clock_scale(chip, f)); },
                        tolerance);
}

RackSpec load_rack(std::string_view system) {
  std::string text, source;
  if (is_path(system)) {
    source = std::string(system);
    text = read_config_file(std::filesystem::path(system));
  } else {
    const EmbeddedFile* f = find_preset(PresetKind::System, system);
    if (!f) f = find_preset(PresetKind::Gpu, system);
    if (!f) return {};
    source = preset_source(*f);
    text = std::string(f->text);
  }
  const YAML::Node energy = parse_yaml(text, source)["energy"];
  if (!energy.IsDefined() || !energy.IsMap()) return {};
  YamlMap m(energy, source, "energy", {"instances_per_rack", "rack_overhead_power"}, true);
  return read_rack(m);
}

ScopeSizes scope_sizes(const SystemSpec& s) {
  const RackSpec r = load_rack(s.source_file.starts_with("preset:") ? std::string_view(s.name) : std::string_view(s.source_file));
  return {s.name, s.chips_per_instance, s.energy.host_power_per_instance.value(), r.instances_per_rack,
          r.overhead_power.value()};
}

CapScope cap_scope(const ScopeSizes& z, const std::string& scope, Watts cap) {
  if (!(cap.value() > 0)) throw ConfigError(fmt::format("--power-cap: {} W; expected > 0", cap.value()));
  CapScope c;
  c.scope = scope;
  c.cap_w = cap.value();
  if (scope == "chip") return c;
  if (scope == "instance") {
    c.instances = 1;
    c.fixed_w = z.host_w;
  } else if (scope == "rack") {
    if (z.instances_per_rack < 1)
      throw ConfigError(fmt::format("--power-cap-scope rack: system {} gives no energy.instances_per_rack", z.system));
    c.instances = z.instances_per_rack;
    c.fixed_w = z.host_w * c.instances + z.rack_overhead_w;
  } else {
    throw ConfigError(fmt::format("--power-cap-scope '{}': expected chip, instance or rack", scope));
  }
  c.chips = z.chips_per_instance * c.instances;
  if (c.cap_w <= c.fixed_w)
    throw ConfigError(fmt::format("a {:g} W cap on a{} {} of {} leaves nothing for the chips: its hosts{} draw {:g} W", c.cap_w,
                                  scope == "instance" ? "n" : "", scope, z.system,
                                  scope == "rack" ? " and rack overhead" : "", c.fixed_w));
  return c;
}

Watts chip_cap(const SystemSpec& system, const std::string& scope, Watts cap) {
  return Watts(cap_scope(scope_sizes(system), scope, cap).chip_cap_w());
}

}  // namespace trnsim::hw
