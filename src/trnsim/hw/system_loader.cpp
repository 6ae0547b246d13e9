// Reads a system YAML (configs/systems/*.yaml) into a SystemSpec: the chip it names (a preset,
// or a file relative to the system file), how many, the scale-up topology and the scale-out
// network. Topology shapes are checked against the chip count.
#include <fmt/core.h>

#include <functional>
#include <numeric>

#include "trnsim/common/error.h"
#include "trnsim/hw/preset_registry.h"
#include "trnsim/hw/energy_loader.h"
#include "trnsim/hw/system_fields.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/hw/yaml_fields.h"

namespace trnsim::hw {
namespace {

// How many dims each topology kind takes (0: none).
int dims_of(std::string_view kind) {
  if (kind == "torus2d") return 2;
  if (kind == "torus3d") return 3;
  if (kind == "ring") return 1;
  return 0;  // switch, tiered_switch, single
}

// tiered_switch: the grouping and one entry per tier, in the fixed order server, rack, cross-rack
// (the order is what routing relies on, so a misordered list is an error, not a guess).
void read_tiers(YamlMap& m, TopologySpec& t, int chips) {
  for (auto key : {"bandwidth_per_chip", "link_latency"})
    if (m.has(key)) m.fail_key(key, "nothing for kind tiered_switch (each entry of tiers gives its own)");
  t.chips_per_server = m.integer("chips_per_server");
  t.servers_per_rack = m.integer("servers_per_rack");
  const long per_rack = static_cast<long>(t.chips_per_server) * t.servers_per_rack;
  if (chips % per_rack != 0)
    m.fail_key("servers_per_rack", fmt::format("chips ({}) to be a multiple of chips_per_server x servers_per_rack "
                                               "({} x {} = {})", chips, t.chips_per_server, t.servers_per_rack,
                                               per_rack));
  constexpr std::string_view names[] = {"server", "rack", "cross-rack"};
  auto items = m.sequence("tiers");
  for (size_t i = 0; i < items.size(); ++i) {
    if (i == std::size(names)) m.fail(items[i], m.field("tiers"), "3 tiers: server, rack, cross-rack");
    YamlMap e(items[i], m.source(), fmt::format("{}[{}]", m.field("tiers"), i), {"name", "bandwidth_per_chip", "latency"});
    SwitchTierSpec tier;
    tier.name = e.text("name");
    if (tier.name != names[i]) e.fail_key("name", fmt::format("'{}' (tiers go server, rack, cross-rack)", names[i]));
    tier.bandwidth_per_chip = e.quantity<GBps>("bandwidth_per_chip");
    tier.latency = e.quantity<Nanoseconds>("latency");
    e.done();
    t.tiers.push_back(tier);
  }
  if (items.size() != std::size(names)) m.fail(m.at("tiers"), m.field("tiers"), "3 tiers: server, rack, cross-rack");
  t.bandwidth_per_chip = GBps(0);
  t.link_latency = t.tiers[0].latency;
  for (const auto& tier : t.tiers) {
    t.bandwidth_per_chip = GBps(t.bandwidth_per_chip.value() + tier.bandwidth_per_chip.value());
    if (tier.latency.value() < t.link_latency.value()) t.link_latency = tier.latency;
  }
}

TopologySpec read_topology(YamlMap m, int chips) {
  TopologySpec t;
  t.kind = m.text("kind");
  if (t.kind != "torus2d" && t.kind != "torus3d" && t.kind != "ring" && t.kind != "switch" &&
      t.kind != "single" && t.kind != "tiered_switch")
    m.fail_key("kind", "one of torus2d, torus3d, ring, switch, tiered_switch, single");
  const int ndims = dims_of(t.kind);
  if (ndims > 0) {
    for (auto& n : m.sequence("dims")) t.dims.push_back(m.integer_at(n, m.field("dims"), 1));
    long product = std::accumulate(t.dims.begin(), t.dims.end(), 1L, std::multiplies<>());
    if (static_cast<int>(t.dims.size()) != ndims || product != chips)
      m.fail_key("dims", fmt::format("{} dimension{} whose product is chips ({})", ndims,
                                     ndims > 1 ? "s" : "", chips));
  } else if (m.has("dims") && !m.sequence("dims").empty()) {
    m.fail_key("dims", fmt::format("no dims for a {} topology", t.kind));
  }
  if (t.kind != "tiered_switch")
    for (auto key : {"chips_per_server", "servers_per_rack", "tiers"})
      if (m.has(key)) m.fail_key(key, "nothing for this kind (only for kind tiered_switch)");
  if (t.kind == "tiered_switch") {
    read_tiers(m, t, chips);
  } else if (t.kind == "single") {
    if (chips != 1) m.fail_key("kind", fmt::format("a multi-chip topology for {} chips", chips));
    // One chip has no scale-up fabric; bandwidth and latency may be left out.
    t.bandwidth_per_chip = m.optional_quantity<GBps>("bandwidth_per_chip").value_or(GBps(0));
    t.link_latency = m.optional_quantity<Nanoseconds>("link_latency").value_or(Nanoseconds(0));
  } else {
    t.bandwidth_per_chip = m.quantity<GBps>("bandwidth_per_chip");
    t.link_latency = m.quantity<Nanoseconds>("link_latency");
  }
  if (m.has("bandwidth_per_dim")) {
    for (auto& n : m.sequence("bandwidth_per_dim"))
      t.bandwidth_per_dim.push_back(GBps(m.quantity_at(n, m.field("bandwidth_per_dim"), Dimension::Bandwidth)));
    if (t.bandwidth_per_dim.size() != t.dims.size())
      m.fail_key("bandwidth_per_dim", fmt::format("one bandwidth per dimension ({})", t.dims.size()));
  }
  m.done();
  return t;
}


// `chip:` names a preset, or (in a file) a chip file relative to the system file.
ChipSpec read_chip_ref(YamlMap& m, const std::filesystem::path& base_dir) {
  std::string ref = m.text("chip");
  std::string expected = fmt::format("a chip preset ({}){}", preset_list(PresetKind::Chip),
                                     base_dir.empty() ? "" : " or a .yaml path relative to this file");
  if (!is_path(ref)) {
    if (!find_preset(PresetKind::Chip, ref)) m.fail_key("chip", expected);
    return load_chip(ref);
  }
  if (base_dir.empty()) m.fail_key("chip", expected);  // a preset refers to presets only
  std::filesystem::path p = std::filesystem::path(ref).is_absolute() ? std::filesystem::path(ref)
                                                                      : base_dir / ref;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(p, ec))
    m.fail_key("chip", fmt::format("{} (no such file: {})", expected, p.lexically_normal().string()));
  return parse_chip(read_config_file(p), p.lexically_normal().string());
}

}  // namespace

ScaleOutSpec read_scale_out(YamlMap m) {
  ScaleOutSpec s;
  s.kind = m.text("kind");
  if (s.kind == "none") {
    // No scale-out network (or no public figure for one): nothing else may be given.
    if (m.has("bandwidth_per_instance")) m.fail_key("bandwidth_per_instance", "nothing for kind none");
    if (m.has("latency")) m.fail_key("latency", "nothing for kind none");
  } else if (s.kind == "efa" || s.kind == "ena") {
    s.bandwidth_per_instance = m.quantity<GBps>("bandwidth_per_instance");
    s.latency = m.quantity<Nanoseconds>("latency");
  } else {
    m.fail_key("kind", "one of efa, ena, none");
  }
  m.done();
  return s;
}

SystemSpec parse_system(const std::string& yaml, const std::string& source,
                        const std::filesystem::path& base_dir) {
  YamlMap m(parse_yaml(yaml, source), source, "",
            {"name", "chip", "chips", "chips_per_instance", "topology", "scale_out", "price", "price_reserved", "energy", "tco"});
  SystemSpec s;
  s.source_file = source;
  s.name = m.text("name");
  s.chip = read_chip_ref(m, base_dir);
  s.chips = m.integer("chips");
  s.chips_per_instance = m.integer("chips_per_instance");
  if (s.chips % s.chips_per_instance != 0)
    m.fail_key("chips_per_instance", fmt::format("a divisor of chips ({})", s.chips));
  s.topology = read_topology(m.map("topology", {"kind", "dims", "bandwidth_per_chip", "bandwidth_per_dim",
                                                "link_latency", "chips_per_server", "servers_per_rack", "tiers"}),
                             s.chips);
  s.scale_out = read_scale_out(m.map("scale_out", {"kind", "bandwidth_per_instance", "latency"}));
  s.price = m.optional_quantity<UsdPerHour>("price");
  s.price_reserved = m.optional_quantity<UsdPerHour>("price_reserved");
  if (m.has("tco")) s.tco = read_tco(m.map("tco", {"capex_per_chip", "capex_per_instance", "network_per_instance", "maintenance_per_year"}));
  if (m.has("energy"))
    s.energy = read_system_energy(m.map("energy", {"host_power_per_instance", "switch_per_byte", "scale_out_per_byte", "instances_per_rack", "rack_overhead_power"}));
  m.done();
  return s;
}

}  // namespace trnsim::hw
