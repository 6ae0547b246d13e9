#include "trnsim/hw/energy_loader.h"

#include <fmt/format.h>

namespace trnsim::hw {

std::vector<OperatingPoint> read_operating_points(YamlMap& m) {
  std::vector<OperatingPoint> points;
  double last_f = 2, last_v = 2;
  for (auto& n : m.sequence("operating_points")) {
    if (!n.IsMap() || n.size() != 2 || !n["clock_scale"] || !n["voltage_scale"])
      m.fail(n, m.field("operating_points"), "{clock_scale: F, voltage_scale: V} items");
    OperatingPoint p{m.number_at(n["clock_scale"], m.field("operating_points.clock_scale"), 0),
                     m.number_at(n["voltage_scale"], m.field("operating_points.voltage_scale"), 0)};
    if (points.empty() && (p.clock_scale != 1 || p.voltage_scale != 1))
      m.fail(n, m.field("operating_points"), "the top point {clock_scale: 1, voltage_scale: 1} first");
    if (!(p.clock_scale < last_f) || !(p.voltage_scale <= last_v))
      m.fail(n, m.field("operating_points"), "points with falling clock and non-rising voltage");
    last_f = p.clock_scale;
    last_v = p.voltage_scale;
    points.push_back(p);
  }
  if (points.empty()) m.fail_key("operating_points", "at least the top point {clock_scale: 1, voltage_scale: 1}");
  return points;
}

EnergySpec read_energy(YamlMap m, const std::set<numerics::DType>& runnable) {
  EnergySpec e;
  e.modelled = true;
  e.full_power = m.quantity<Watts>("full_power");
  e.static_power = m.quantity<Watts>("static_power");
  if (!(e.static_power < e.full_power)) m.fail_key("static_power", "less than full_power");
  YamlMap macs = m.any_map("tensor_per_mac");
  for (auto& [k, v] : macs.entries()) {
    const std::string field = macs.field(k.Scalar());
    const numerics::DType t = macs.dtype_at(k, field);
    if (!runnable.count(t)) macs.fail(k, field, "a dtype of core.tensor.dtype_rate");
    e.tensor_per_mac[t] = Joules(macs.quantity_at(v, field, Dimension::Energy));
  }
  for (auto t : runnable)
    if (!e.tensor_per_mac.count(t))
      m.fail_key("tensor_per_mac", fmt::format("an entry for every TensorE dtype ({} is missing)", numerics::name(t)));
  e.vector_per_element = m.quantity<Joules>("vector_per_element");
  e.scalar_per_element = m.quantity<Joules>("scalar_per_element");
  e.gpsimd_per_element = m.quantity<Joules>("gpsimd_per_element");
  e.sbuf_per_byte = m.quantity<Joules>("sbuf_per_byte");
  e.psum_per_byte = m.quantity<Joules>("psum_per_byte");
  e.hbm_per_byte = m.quantity<Joules>("hbm_per_byte");
  e.link_per_byte = m.quantity<Joules>("link_per_byte");
  e.operating_points = read_operating_points(m);
  m.done();
  return e;
}

SystemEnergySpec read_system_energy(YamlMap m) {
  SystemEnergySpec e;
  e.modelled = true;
  e.host_power_per_instance = m.quantity<Watts>("host_power_per_instance");
  e.switch_per_byte = m.quantity<Joules>("switch_per_byte");
  e.scale_out_per_byte = m.quantity<Joules>("scale_out_per_byte");
  read_rack(m);  // checked here, where a file's other errors are; kept by load_rack
  m.done();
  return e;
}

RackSpec read_rack(YamlMap& m) {
  RackSpec r;
  if (m.has("instances_per_rack")) {
    r.instances_per_rack = m.integer("instances_per_rack");
    r.overhead_power = m.quantity<Watts>("rack_overhead_power");
  } else if (m.has("rack_overhead_power")) {
    m.fail_key("rack_overhead_power", "only beside instances_per_rack (the instances in a rack)");
  }
  return r;
}

ChipSpec at_clock_scale(ChipSpec chip, double f) {
  const double v = chip.energy.voltage_at(f);
  auto& c = chip.core;
  const double k = f / chip.energy.clock_scale;  // the chip may already be scaled
  for (GHz* clock : {&c.tensor.clock, &c.vector.clock, &c.scalar.clock, &c.gpsimd.clock}) *clock = *clock * k;
  chip.energy.clock_scale = f;
  chip.energy.voltage_scale = v;
  return chip;
}

}  // namespace trnsim::hw
