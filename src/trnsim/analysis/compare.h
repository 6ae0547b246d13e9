// `trnsim compare`: the same serving workload (same seed, same requests) on several systems,
// each fleet sized to the load and SLO (the fewest replicas whose run meets the goodput target),
// then latency, throughput, chips, $ per million output tokens (on-demand and reserved), J per
// token and tokens per MW side by side, with each figure's ratio to the first system and every
// assumption needed to redo the $ by hand.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trnsim::analysis {

struct CompareSpec {
  std::vector<std::string> systems;
  int tp = 1;                                  // default tensor-parallel degree
  std::map<std::string, int> tp_by_system;     // --tp trn2.48xlarge=4,p5.48xlarge=1
  nlohmann::json serve = nlohmann::json::object();  // serve options (workloads/serve_spec.h names), model included
  std::string price = "on-demand";             // headline: on-demand or reserved
  std::map<std::string, double> price_estimates;  // system -> on-demand USD/h (overrides, marked estimates)
  double pue = 1.15;
  double kwh_usd = 0.08;
  double attainment = 0.99;                    // SLO attainment a sized fleet must reach
  int max_replicas = 256;                      // the sizing search stops here
};

struct CompareResult {
  nlohmann::json json;  // kind "compare"
  std::string table;
};

// "4" or "trn2.48xlarge=4,p5.48xlarge=1" into spec.tp / spec.tp_by_system.
void parse_compare_tp(CompareSpec& spec, const std::string& text);

CompareResult run_compare(const CompareSpec& spec);

}  // namespace trnsim::analysis
