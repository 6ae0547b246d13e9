// Cost of a workload on a system, cloud and owned: $ per hour, $ per million tokens (or
// inferences), and the energy view (J per token, tokens per second per MW at the chip, server
// and facility level). Inputs are the system's prices, capex and power (hw::SystemSpec /
// hw::GpuSystemSpec, turned into SystemCostFacts) and a measured workload (throughput and power
// of one replica, from a result JSON). Every assumption used is returned with the figures, so
// each $ can be reproduced by hand (TcoResult::assumptions).
#pragma once
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "trnsim/hw/chip_spec.h"
#include "trnsim/hw/gpu_spec.h"

namespace trnsim::analysis {

// What the cost model needs of a system (Trainium or GPU).
struct SystemCostFacts {
  std::string name;
  int chips_per_instance = 1;
  std::optional<double> on_demand_usd_per_hour, reserved_usd_per_hour;  // per instance
  hw::TcoSpec tco;
  double chip_tdp_w = 0;          // configured chip power (for idle/utilisation-weighted energy)
  double chip_static_w = 0;       // chip power when idle
  double host_w = 0;              // per instance
};
SystemCostFacts cost_facts(const hw::SystemSpec& s);
SystemCostFacts cost_facts(const hw::GpuSystemSpec& s);
SystemCostFacts load_cost_facts(const std::string& system);  // a Trainium or a GPU system

// One replica of the workload as measured: what it serves and what it draws.
struct WorkloadFacts {
  std::string unit = "tokens";    // "tokens" (LLM) or "inferences" (run)
  double per_s = 0;               // tokens (or inferences) per second of one replica
  int chips = 1;                  // chips of one replica
  double busy_power_w = 0;        // of the replica's chips while serving (0: chip TDP x chips)
};
// From a result JSON of kind llm/serve/train/run/compare-row: throughput from
// output_tokens_per_s | output_token_throughput_tps (serve: the fleet) | throughput_tokens_per_s |
// tokens_per_s | throughput_per_s, chips from
// chips | tp (1 if absent), power from average_power_w. ConfigError naming the missing field.
WorkloadFacts workload_from_json(const nlohmann::json& result, const std::string& source);

struct TcoOptions {
  std::string price = "on-demand";  // on-demand | reserved | a number (USD per instance-hour)
  double pue = 1.15;
  double kwh_usd = 0.08;
  double utilisation = 0.7;         // fraction of hours the fleet serves at the measured rate
  double amortisation_years = 4;
  double egress_usd_per_gb = 0;     // network egress price
  double egress_gb_per_million = 0; // GB leaving per million tokens/inferences
  double storage_usd_per_month = 0; // per instance (model weights, logs)
  // Added by energy: > 0: the cost and energy of a job of this many tokens at the measured
  // rate on the replica's instances (a training run to a token budget), kept busy throughout.
  double job_tokens = 0;
};

struct TcoResult {
  nlohmann::json json;              // kind "tco", usd fields, assumptions
  std::string table;                // the same for a terminal
};

// ConfigError naming the flag for an option outside its range (tco() checks them too; a
// command calls this first, before it spends a workload run).
void check_tco_options(const TcoOptions& options);

TcoResult tco(const SystemCostFacts& system, const WorkloadFacts& workload, const TcoOptions& options);

}  // namespace trnsim::analysis
