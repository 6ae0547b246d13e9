#include "trnsim/analysis/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "trnsim/analysis/compare_fleet.h"
#include "trnsim/analysis/compare_price.h"
#include "trnsim/analysis/tco.h"
#include "trnsim/common/error.h"
#include "trnsim/hw/gpu_spec.h"

namespace trnsim::analysis {

namespace {

using nlohmann::json;
constexpr const char* kDefaultSlo = "mlperf-server";

// The figures whose ratio to the first system is reported.
const std::vector<std::string>& ratio_keys() {
  static const std::vector<std::string> k = {
      "p50_ttft_s", "p99_ttft_s", "p50_tpot_s", "p99_tpot_s", "output_token_throughput_tps", "replicas", "chips",
      "usd_per_million_output_tokens_on_demand", "usd_per_million_output_tokens_reserved", "j_per_output_token_chip",
      "j_per_output_token_facility", "output_tokens_per_s_per_mw_facility"};
  return k;
}

json per_million(const std::optional<double>& usd_per_hour, int chips_per_instance, int chips, double time_s, double tokens) {
  if (!usd_per_hour || !(tokens > 0)) return nullptr;
  return *usd_per_hour / chips_per_instance * chips * (time_s / 3600) / (tokens / 1e6);
}

// One system: the sized fleet's serving figures, its price, cost and energy.
json system_row(const CompareSpec& spec, const std::string& system) {
  const bool gpu = hw::is_gpu_system(system);
  const SystemCostFacts facts = load_cost_facts(system);  // a one-line error for a bad name
  json values = spec.serve;
  values["system"] = system;
  const auto tp = spec.tp_by_system.find(system);
  values["tp"] = tp != spec.tp_by_system.end() ? tp->second : spec.tp;
  // Offline (all requests at time 0) is a throughput run: its TTFT grows with the queue, not
  // the load, so its fleet is --replicas (default 1), not sized.
  const json off = values.value("offline", json(false));
  const bool offline = off == true || off == "true" || off == "1" || off == 1;
  const bool fixed = values.contains("replicas") || offline;
  if (offline && !values.contains("replicas")) values["replicas"] = 1;
  const SizedFleet fleet = size_fleet(values, spec.attainment, spec.max_replicas);
  const json& r = fleet.result;
  const PricedSystem p = price_system(facts, gpu, spec.price_estimates);

  json row;
  row["system"] = system;
  row["tp"] = r["tp"];
  for (const char* k : {"model", "traffic", "seed", "slo", "slo_ttft_s", "slo_tpot_s", "p50_ttft_s", "p99_ttft_s", "p50_tpot_s", "p99_tpot_s", "output_token_throughput_tps",
                        "request_throughput_rps", "slo_attainment", "replicas", "chips_per_replica", "chips",
                        "output_tokens", "requests", "time_s", "energy_j", "busy_fraction"})
    row[k] = r[k];
  row["clock_scale"] = r.value("clock_scale", 1.0);
  if (r.contains("power_cap")) row["power_cap"] = r["power_cap"];  // the sized fleet's (--power-cap)
  row["slo_met"] = fleet.met;
  row["fleet_sizing"] = !fixed ? "smallest meeting the SLO" : offline ? "fixed: offline run" : "fixed: --replicas";
  row["sizing_trials"] = fleet.trials;
  const int chips = r["chips"].get<int>();
  const double time_s = r["time_s"].get<double>(), tokens = r["output_tokens"].get<double>();
  row["chips_per_instance"] = facts.chips_per_instance;
  row["instances"] = static_cast<double>(chips) / facts.chips_per_instance;
  row["chip_hours"] = chips * time_s / 3600;
  row["price"] = {{"on_demand_usd_per_instance_hour", p.on_demand_usd_per_hour ? json(*p.on_demand_usd_per_hour) : json(nullptr)},
                  {"reserved_usd_per_instance_hour", p.reserved_usd_per_hour ? json(*p.reserved_usd_per_hour) : json(nullptr)},
                  {"on_demand_is_estimate", p.on_demand_estimate}, {"reserved_is_estimate", p.reserved_estimate},
                  {"on_demand_source", p.on_demand_source}, {"reserved_source", p.reserved_source}};
  row["usd_per_million_output_tokens_on_demand"] =
      per_million(p.on_demand_usd_per_hour, facts.chips_per_instance, chips, time_s, tokens);
  row["usd_per_million_output_tokens_reserved"] =
      per_million(p.reserved_usd_per_hour, facts.chips_per_instance, chips, time_s, tokens);
  row["usd_per_million_output_tokens"] = row[spec.price == "reserved" ? "usd_per_million_output_tokens_reserved"
                                                                      : "usd_per_million_output_tokens_on_demand"];
  // Energy: the chips' simulated energy, plus each instance's host share, times PUE at the facility.
  const double host_j = facts.host_w * row["instances"].get<double>() * time_s;
  const double facility_j = (r["energy_j"].get<double>() + host_j) * spec.pue;
  row["host_power_per_instance_w"] = facts.host_w;
  row["facility_energy_j"] = facility_j;
  row["j_per_output_token_chip"] = tokens > 0 ? r["energy_j"].get<double>() / tokens : 0.0;
  row["j_per_output_token_facility"] = tokens > 0 ? facility_j / tokens : 0.0;
  // Tokens per second per MW of facility power = 1e6 / (J per token).
  row["output_tokens_per_s_per_mw_facility"] = facility_j > 0 ? tokens / facility_j * 1e6 : 0.0;
  row["electricity_usd_per_million_output_tokens"] = tokens > 0 ? facility_j / 3.6e6 * spec.kwh_usd / (tokens / 1e6) : 0.0;
  return row;
}

void add_ratios(json& rows) {
  const json first = rows.front();
  for (auto& row : rows) {
    json ratio = json::object();
    for (const auto& k : ratio_keys()) {
      const bool ok = row[k].is_number() && first[k].is_number() && first[k].get<double>() != 0;
      ratio[k] = ok ? json(row[k].get<double>() / first[k].get<double>()) : json(nullptr);
    }
    row["ratio_to_first"] = ratio;
  }
}

std::string cell(const json& v, const char* f = "{:.4g}") {
  return v.is_number() ? fmt::format(fmt::runtime(f), v.get<double>()) : std::string("n/a");
}

std::string table(const json& j) {
  const json& rows = j["systems"];
  std::string t = fmt::format("============ compare: {} ============\n", j["model"].get<std::string>());
  t += fmt::format("  {:<46}", "");
  for (const auto& r : rows) t += fmt::format(" {:>22}", r["system"].get<std::string>());
  t += "\n";
  auto line = [&](const std::string& name, const std::string& key, double scale, const char* f) {
    t += fmt::format("  {:<46}", name);
    for (const auto& r : rows) {
      const json v = r[key].is_number() ? json(r[key].get<double>() * scale) : json(nullptr);
      std::string c = cell(v, f);
      if (&r != &rows.front() && rows.front()["ratio_to_first"].contains(key)) c += " (" + cell(r["ratio_to_first"][key], "{:.2f}") + "x)";
      t += fmt::format(" {:>22}", c);
    }
    t += "\n";
  };
  line("tp (ranks: GPUs, or NeuronCores on Trainium)", "tp", 1, "{:.0f}");
  line("chips per replica", "chips_per_replica", 1, "{:.0f}");
  line("replicas for the load at the SLO", "replicas", 1, "{:.0f}");
  line("chips", "chips", 1, "{:.0f}");
  if (rows.front().contains("power_cap")) {
    line("engine clock scale under the power cap", "clock_scale", 1, "{:.3f}");
    t += fmt::format("  {:<46}", "power per chip, W: unthrottled -> capped");
    for (const auto& r : rows)
      t += fmt::format(" {:>22}", fmt::format("{:.0f} -> {:.0f}", r["power_cap"]["unthrottled_power_w"].get<double>(),
                                              r["power_cap"]["power_w"].get<double>()));
    t += "\n";
  }
  line("SLO attainment (%)", "slo_attainment", 100, "{:.2f}");
  line("p50 TTFT (ms)", "p50_ttft_s", 1e3, "{:.1f}");
  line("p99 TTFT (ms)", "p99_ttft_s", 1e3, "{:.1f}");
  line("p50 TPOT (ms)", "p50_tpot_s", 1e3, "{:.2f}");
  line("p99 TPOT (ms)", "p99_tpot_s", 1e3, "{:.2f}");
  line("output throughput (tok/s)", "output_token_throughput_tps", 1, "{:.0f}");
  line("simulated time (s)", "time_s", 1, "{:.1f}");
  line("USD per million output tokens, on-demand", "usd_per_million_output_tokens_on_demand", 1, "{:.4g}");
  line("USD per million output tokens, reserved", "usd_per_million_output_tokens_reserved", 1, "{:.4g}");
  line("J per output token (chips)", "j_per_output_token_chip", 1, "{:.4g}");
  line("J per output token (facility, PUE)", "j_per_output_token_facility", 1, "{:.4g}");
  line("output tokens/s per MW (facility)", "output_tokens_per_s_per_mw_facility", 1, "{:.4g}");
  t += "  (x): ratio to the first system\n";
  if (rows.front()["fleet_sizing"] != "smallest meeting the SLO")
    t += fmt::format("  fleet {} (not sized to the SLO)\n", rows.front()["fleet_sizing"].get<std::string>());
  for (const auto& r : rows)
    if (!r["slo_met"].get<bool>() && r["fleet_sizing"] == "smallest meeting the SLO")
      t += fmt::format("  WARNING: {} does not meet {:.1f}% SLO attainment within --max-replicas {} (figures at {} replicas)\n",
                       r["system"].get<std::string>(), 100 * j["assumptions"]["slo_attainment_target"].get<double>(),
                       j["assumptions"]["max_replicas"].get<int>(), r["replicas"].get<int>());
  const json& a = j["assumptions"];
  t += fmt::format("assumptions: workload {}; SLO {} (TTFT {:g} s, TPOT {:g} s) met by >= {:g}% of requests; PUE {:g}; "
                   "electricity {:g} USD/kWh (facility energy only; cloud prices include it)\n",
                   a["traffic"].get<std::string>(), a["slo"].get<std::string>(), a["slo_ttft_s"].get<double>(),
                   a["slo_tpot_s"].get<double>(), 100 * a["slo_attainment_target"].get<double>(), a["pue"].get<double>(),
                   a["kwh_usd"].get<double>());
  t += "  USD per million = instance price / chips per instance x chips x simulated time (h) / (output tokens / 1e6)\n";
  t += "  J per token (facility) = (chips' simulated energy + host power x chips / chips per instance x time) x PUE / output tokens\n";
  for (const auto& r : rows) {
    const json& p = r["price"];
    t += fmt::format("  {}: {} chips x {:.2f} s = {:.5g} chip-hours, {} output tokens, {} chips per instance, replicas busy "
                     "{:.1f}% of the time (utilisation), host {:g} W per instance\n",
                     r["system"].get<std::string>(), r["chips"].get<int>(), r["time_s"].get<double>(),
                     r["chip_hours"].get<double>(), r["output_tokens"].get<int64_t>(), r["chips_per_instance"].get<int>(),
                     100 * r["busy_fraction"].get<double>(), r["host_power_per_instance_w"].get<double>());
    t += fmt::format("    on-demand {} USD/h: {}\n    reserved  {} USD/h: {}\n",
                     cell(p["on_demand_usd_per_instance_hour"], "{:.2f}"), p["on_demand_source"].get<std::string>(),
                     cell(p["reserved_usd_per_instance_hour"], "{:.2f}"), p["reserved_source"].get<std::string>());
  }
  return t;
}

}  // namespace

void parse_compare_tp(CompareSpec& spec, const std::string& text) {
  if (text.find('=') == std::string::npos) {
    char* end = nullptr;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (end == text.c_str() || *end || v < 1) throw ConfigError(fmt::format("--tp '{}': expected N >= 1 or SYSTEM=N,...", text));
    spec.tp = static_cast<int>(v);
    return;
  }
  for (const auto& [sys, v] : parse_system_numbers(text, "--tp")) {
    if (v != static_cast<int>(v)) throw ConfigError(fmt::format("--tp {}={:g}: expected an integer", sys, v));
    spec.tp_by_system[sys] = static_cast<int>(v);
  }
}

CompareResult run_compare(const CompareSpec& spec) {
  if (spec.systems.empty()) throw ConfigError("compare: --systems needs at least one system");
  if (!spec.serve.contains("model")) throw ConfigError("compare: --model is required");
  if (spec.price != "on-demand" && spec.price != "reserved")
    throw ConfigError(fmt::format("--price '{}': expected on-demand or reserved", spec.price));
  if (!(spec.attainment > 0 && spec.attainment <= 1)) throw ConfigError(fmt::format("--attainment {} outside (0, 1]", spec.attainment));
  if (!(spec.pue >= 1)) throw ConfigError(fmt::format("--pue {} below 1", spec.pue));
  if (!(spec.kwh_usd >= 0)) throw ConfigError(fmt::format("--kwh-usd {}: expected >= 0", spec.kwh_usd));
  if (spec.max_replicas < 1) throw ConfigError("--max-replicas: expected >= 1");
  for (const char* k : {"system", "autoscale", "tp"})
    if (spec.serve.contains(k)) throw ConfigError(fmt::format("compare: --{} is set by compare itself (use --systems, --tp)", k));
  for (const auto& [sys, _] : spec.tp_by_system)
    if (std::find(spec.systems.begin(), spec.systems.end(), sys) == spec.systems.end())
      throw ConfigError(fmt::format("--tp {}=...: {} is not one of --systems", sys, sys));
  for (const auto& s : spec.systems) (void)load_cost_facts(s);  // bad names fail before any run
  CompareSpec sp = spec;
  if (!sp.serve.contains("slo")) sp.serve["slo"] = kDefaultSlo;

  json j;
  j["kind"] = "compare";
  j["systems"] = json::array();
  double total = 0;
  for (const auto& s : sp.systems) {
    j["systems"].push_back(system_row(sp, s));
    total += j["systems"].back()["time_s"].get<double>();
  }
  add_ratios(j["systems"]);
  const json& first = j["systems"].front();
  j["model"] = first["model"];
  j["time_s"] = total;  // all systems' sized runs together
  j["assumptions"] = {{"traffic", first["traffic"]}, {"seed", first["seed"]}, {"slo", first["slo"]},
                      {"slo_ttft_s", first["slo_ttft_s"]}, {"slo_tpot_s", first["slo_tpot_s"]},
                      {"slo_attainment_target", sp.attainment}, {"max_replicas", sp.max_replicas}, {"pue", sp.pue},
                      {"kwh_usd", sp.kwh_usd}, {"price", sp.price},
                      {"usd_per_million_formula", "price_usd_per_instance_hour / chips_per_instance * chips * time_s / 3600 "
                                                  "/ (output_tokens / 1e6)"},
                      {"j_per_token_formula", "(energy_j + host_power_per_instance_w * instances * time_s) * pue / output_tokens"}};
  return {j, table(j)};
}

}  // namespace trnsim::analysis
