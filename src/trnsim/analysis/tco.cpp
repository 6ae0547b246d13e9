#include "trnsim/analysis/tco.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "trnsim/common/error.h"
#include "trnsim/hw/preset_registry.h"
#include "trnsim/hw/spec_loader.h"

namespace trnsim::analysis {

namespace {
constexpr double kHoursPerYear = 8760;
std::optional<double> usd(const std::optional<UsdPerHour>& p) {
  return p ? std::optional<double>(p->value()) : std::nullopt;
}
}  // namespace

SystemCostFacts cost_facts(const hw::SystemSpec& s) {
  SystemCostFacts f{s.name, s.chips_per_instance, usd(s.price), usd(s.price_reserved), s.tco};
  f.chip_tdp_w = s.chip.power ? s.chip.power->value() : s.chip.energy.full_power.value();
  f.chip_static_w = s.chip.energy.static_power.value();
  f.host_w = s.energy.host_power_per_instance.value();
  return f;
}

SystemCostFacts cost_facts(const hw::GpuSystemSpec& s) {
  SystemCostFacts f{s.name, s.gpus_per_instance, usd(s.price), usd(s.price_reserved), s.tco};
  f.chip_tdp_w = s.gpu.power.value();
  f.chip_static_w = s.gpu.energy.static_power.value();
  f.host_w = s.energy.host_power_per_instance.value();
  return f;
}

SystemCostFacts load_cost_facts(const std::string& system) {
  if (!hw::is_path(system) && !hw::find_preset(hw::PresetKind::System, system) && !hw::is_gpu_system(system))
    throw ConfigError(fmt::format("no system named '{}' (Trainium: {}; GPU presets: {})", system,
                                  hw::preset_list(hw::PresetKind::System), hw::preset_list(hw::PresetKind::Gpu)));
  return hw::is_gpu_system(system) ? cost_facts(hw::load_gpu_system(system)) : cost_facts(hw::load_system(system));
}

WorkloadFacts workload_from_json(const nlohmann::json& j, const std::string& source) {
  WorkloadFacts w;
  bool found = false;
  for (const char* k : {"output_tokens_per_s", "output_token_throughput_tps", "throughput_tokens_per_s", "tokens_per_s"})
    if (j.contains(k) && j[k].is_number()) {
      w.per_s = j[k].get<double>();
      found = true;
      break;
    }
  if (!found && j.contains("throughput_per_s") && j["throughput_per_s"].is_number()) {
    w.per_s = j["throughput_per_s"].get<double>();
    w.unit = "inferences";
    found = true;
  }
  if (!found || !(w.per_s > 0))
    throw ConfigError(fmt::format("{}: expected a positive output_tokens_per_s, output_token_throughput_tps, throughput_tokens_per_s, tokens_per_s or "
                                  "throughput_per_s (a result of trnsim llm, serve, train or run --json)", source));
  for (const char* k : {"chips", "replica_chips", "tp"})
    if (j.contains(k) && j[k].is_number_integer()) {
      w.chips = j[k].get<int>();
      break;
    }
  if (w.chips < 1) throw ConfigError(fmt::format("{}: chips must be >= 1, got {}", source, w.chips));
  if (j.contains("average_power_w") && j["average_power_w"].is_number()) w.busy_power_w = j["average_power_w"].get<double>();
  return w;
}

namespace {

// A custom --price: a positive, finite USD per instance-hour.
double custom_price(const std::string& price) {
  char* end = nullptr;
  const double v = std::strtod(price.c_str(), &end);
  if (end == price.c_str() || *end || !(v > 0) || !std::isfinite(v))
    throw ConfigError(fmt::format("--price '{}': expected on-demand, reserved or a positive USD per instance-hour", price));
  return v;
}

}  // namespace

void check_tco_options(const TcoOptions& o) {
  if (!(o.utilisation > 0 && o.utilisation <= 1)) throw ConfigError(fmt::format("--utilisation {} outside (0, 1]", o.utilisation));
  if (!(o.pue >= 1)) throw ConfigError(fmt::format("--pue {} below 1", o.pue));
  // Prices and quantities are >= 0 (years > 0): --kwh-usd -1 gave a negative owned cost per hour.
  const auto at_least_zero = [](const char* flag, double v) {
    if (!(v >= 0)) throw ConfigError(fmt::format("{} {}: expected >= 0", flag, v));
  };
  at_least_zero("--kwh-usd", o.kwh_usd);
  at_least_zero("--egress-usd-per-gb", o.egress_usd_per_gb);
  at_least_zero("--egress-gb-per-million", o.egress_gb_per_million);
  at_least_zero("--storage-usd-per-month", o.storage_usd_per_month);
  at_least_zero("--tokens", o.job_tokens);
  if (!(o.amortisation_years > 0)) throw ConfigError(fmt::format("--years {}: expected > 0", o.amortisation_years));
  if (o.price != "on-demand" && o.price != "reserved") custom_price(o.price);
}

TcoResult tco(const SystemCostFacts& s, const WorkloadFacts& w, const TcoOptions& o) {
  if (w.chips > s.chips_per_instance && w.chips % s.chips_per_instance)
    throw ConfigError(fmt::format("a replica of {} chips does not fill whole {} instances of {} chips", w.chips, s.name,
                                  s.chips_per_instance));
  check_tco_options(o);
  // Per instance-hour: replicas per instance (or a replica's share of instances).
  const double replicas = static_cast<double>(s.chips_per_instance) / w.chips;
  const double units_per_hour = w.per_s * replicas * 3600 * o.utilisation;
  const double million_per_hour = units_per_hour / 1e6;
  const double extras_per_million =
      o.egress_usd_per_gb * o.egress_gb_per_million +
      (million_per_hour > 0 ? o.storage_usd_per_month * 12 / kHoursPerYear / million_per_hour : 0);

  // Cloud price per instance-hour.
  std::optional<double> price;
  std::string price_kind = o.price;
  if (o.price == "on-demand") price = s.on_demand_usd_per_hour;
  else if (o.price == "reserved") price = s.reserved_usd_per_hour;
  else {
    price = custom_price(o.price);
    price_kind = "custom";
  }

  // Power: the replica's chips at their measured power while busy, static power otherwise, plus hosts.
  const double busy_chip_w = w.busy_power_w > 0 ? w.busy_power_w / w.chips : s.chip_tdp_w;
  if (!(busy_chip_w > 0))
    throw ConfigError(fmt::format("{}: no chip power to cost: the result has no average_power_w and the chip no power figure", s.name));
  const double chip_w = busy_chip_w * o.utilisation + s.chip_static_w * (1 - o.utilisation);
  const double server_w = chip_w * s.chips_per_instance + s.host_w;
  const double facility_w = server_w * o.pue;
  const double energy_usd_per_hour = facility_w / 1000 * o.kwh_usd;

  nlohmann::json j;
  j["kind"] = "tco";
  j["system"] = s.name;
  j["unit"] = w.unit;
  j["time_s"] = 3600.0;  // figures are per instance-hour
  auto per_million = [&](double usd_per_hour) {
    return million_per_hour > 0 ? usd_per_hour / million_per_hour + extras_per_million : 0.0;
  };
  if (price) {
    j["cloud"] = {{"price", price_kind}, {"usd_per_instance_hour", *price},
                  {"usd_per_million_" + w.unit, per_million(*price)}};
  } else {
    j["cloud"] = {{"price", price_kind}, {"usd_per_instance_hour", nullptr}, {"usd_per_million_" + w.unit, nullptr},
                  {"note", fmt::format("no {} price for {} in its config; give --price USD_PER_HOUR", o.price, s.name)}};
  }
  if (s.tco.modelled) {
    const double capex = s.tco.capex_per_chip.value() * s.chips_per_instance + s.tco.capex_per_instance.value() +
                         s.tco.network_per_instance.value();
    const double amort = capex / (o.amortisation_years * kHoursPerYear);
    const double maint = capex * s.tco.maintenance_per_year / kHoursPerYear;
    const double owned = amort + maint + energy_usd_per_hour;
    j["owned"] = {{"capex_usd_per_instance", capex}, {"amortisation_usd_per_hour", amort},
                  {"maintenance_usd_per_hour", maint}, {"energy_usd_per_hour", energy_usd_per_hour},
                  {"usd_per_instance_hour", owned}, {"usd_per_million_" + w.unit, per_million(owned)}};
  } else {
    j["owned"] = nullptr;
  }
  const double per_s_instance = w.per_s * replicas;  // while busy
  const double busy_server_w = busy_chip_w * s.chips_per_instance + s.host_w;
  j["energy"] = {{"chip_power_w", busy_chip_w * s.chips_per_instance},
                 {"server_power_w", busy_server_w},
                 {"facility_power_w", busy_server_w * o.pue},
                 {"j_per_" + std::string(w.unit == "tokens" ? "token" : "inference"), busy_server_w * o.pue / per_s_instance},
                 {w.unit + "_per_s_per_mw_chip", per_s_instance / (busy_chip_w * s.chips_per_instance) * 1e6},
                 {w.unit + "_per_s_per_mw_server", per_s_instance / busy_server_w * 1e6},
                 {w.unit + "_per_s_per_mw_facility", per_s_instance / (busy_server_w * o.pue) * 1e6}};
  j["assumptions"] = {{"replica_chips", w.chips}, {"replica_" + w.unit + "_per_s", w.per_s},
                      {"replicas_per_instance", replicas}, {"chips_per_instance", s.chips_per_instance},
                      {"utilisation", o.utilisation}, {"pue", o.pue}, {"kwh_usd", o.kwh_usd},
                      {"amortisation_years", o.amortisation_years}, {"busy_chip_power_w", busy_chip_w},
                      {"idle_chip_power_w", s.chip_static_w}, {"host_power_w", s.host_w},
                      {"average_facility_power_w", facility_w}, {"egress_usd_per_gb", o.egress_usd_per_gb},
                      {"egress_gb_per_million", o.egress_gb_per_million}, {"storage_usd_per_month", o.storage_usd_per_month},
                      {"million_" + w.unit + "_per_instance_hour", million_per_hour}};
  if (s.tco.modelled)
    j["assumptions"]["capex"] = {{"per_chip_usd", s.tco.capex_per_chip.value()}, {"per_instance_usd", s.tco.capex_per_instance.value()},
                                 {"network_per_instance_usd", s.tco.network_per_instance.value()},
                                 {"maintenance_per_year", s.tco.maintenance_per_year}};

  // A job of N tokens on the replica's own instances, busy all along: hours, USD, energy.
  const double instances = static_cast<double>(w.chips) / s.chips_per_instance;  // a partial one's other chips work elsewhere
  const double job_h = o.job_tokens > 0 ? o.job_tokens / w.per_s / 3600 : 0;
  const double job_chip_j = busy_chip_w * w.chips * job_h * 3600;
  const double job_server_j = job_chip_j + s.host_w * instances * job_h * 3600;
  if (o.job_tokens > 0) {
    nlohmann::json b = {{"tokens", o.job_tokens}, {"time_s", job_h * 3600}, {"instances", instances},
                        {"instance_hours", instances * job_h}, {"chip_energy_j", job_chip_j},
                        {"server_energy_j", job_server_j}, {"facility_energy_j", job_server_j * o.pue},
                        {"facility_energy_mwh", job_server_j * o.pue / 3.6e9}};
    b["cloud_usd"] = price ? nlohmann::json(*price * instances * job_h) : nlohmann::json(nullptr);
    if (s.tco.modelled) {
      const auto& ow = j["owned"];
      const double busy_energy_usd_h = busy_server_w * o.pue / 1000 * o.kwh_usd;  // per instance, busy
      b["owned_usd"] = (ow["amortisation_usd_per_hour"].get<double>() + ow["maintenance_usd_per_hour"].get<double>() +
                        busy_energy_usd_h) * instances * job_h;
    }
    b["formula"] = "time = tokens / tokens_per_s; cloud = price x instances x hours; energy = (chip power x chips + host x "
                   "instances) x time x pue; owned = (amortisation + maintenance + busy energy) per instance-hour x instance-hours";
    j["job"] = b;
  }

  TcoResult r;
  r.json = j;
  std::string& t = r.table;
  t += fmt::format("{}: {:.4g} {}/s per replica of {} chip(s), {:g} replica(s) per instance\n", s.name, w.per_s, w.unit, w.chips, replicas);
  t += fmt::format("  {:.4g} million {} per instance-hour at {:.0f}% utilisation\n", million_per_hour, w.unit, 100 * o.utilisation);
  if (price)
    t += fmt::format("  cloud ({}): {:.2f} USD/h -> {:.4g} USD per million {}\n", price_kind, *price, per_million(*price), w.unit);
  else
    t += fmt::format("  cloud ({}): no price in the config (--price USD_PER_HOUR)\n", o.price);
  if (s.tco.modelled) {
    const auto& ow = j["owned"];
    t += fmt::format("  owned: capex {:.0f} USD/instance over {:g} y = {:.2f} USD/h + maintenance {:.2f} + energy {:.2f} "
                     "({:.0f} W x PUE {:g} at {:g} USD/kWh) = {:.2f} USD/h -> {:.4g} USD per million {}\n",
                     ow["capex_usd_per_instance"].get<double>(), o.amortisation_years, ow["amortisation_usd_per_hour"].get<double>(),
                     ow["maintenance_usd_per_hour"].get<double>(), energy_usd_per_hour, server_w, o.pue, o.kwh_usd,
                     ow["usd_per_instance_hour"].get<double>(), ow["usd_per_million_" + w.unit].get<double>(), w.unit);
  }
  t += fmt::format("  energy: {:.3g} J per {} at the facility; {:.4g} {}/s per MW (chip), {:.4g} (server), {:.4g} (facility)\n",
                   busy_server_w * o.pue / per_s_instance, w.unit == "tokens" ? "token" : "inference",
                   per_s_instance / (busy_chip_w * s.chips_per_instance) * 1e6, w.unit, per_s_instance / busy_server_w * 1e6,
                   per_s_instance / (busy_server_w * o.pue) * 1e6);
  if (o.job_tokens > 0) {
    const auto& b = j["job"];
    t += fmt::format("  job of {:.4g} tokens: {:.4g} h on {:g} instance(s) = {:.4g} instance-hours; cloud {}; owned {}; "
                     "energy {:.4g} MWh at the facility ({:.4g} MWh chips)\n",
                     o.job_tokens, job_h, instances, instances * job_h,
                     b["cloud_usd"].is_null() ? std::string("no price") : fmt::format("{:.4g} USD", b["cloud_usd"].get<double>()),
                     b.contains("owned_usd") ? fmt::format("{:.4g} USD", b["owned_usd"].get<double>()) : std::string("n/a"),
                     b["facility_energy_mwh"].get<double>(), job_chip_j / 3.6e9);
  }
  return r;
}

}  // namespace trnsim::analysis
