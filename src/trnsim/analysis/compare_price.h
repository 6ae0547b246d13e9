// Instance prices for `trnsim compare`, each with where it came from. A system with no published
// on-demand price (trn2.48xlarge: HARDWARE.md has none) gets an estimate, marked as one, never
// silently: by default a Trainium chip-hour at a third of an H100's (p5.48xlarge on-demand per
// GPU), the seeds' claim in issue 15; `--price-estimate SYSTEM=USD` replaces it.
#pragma once
#include <map>
#include <optional>
#include <string>

#include "trnsim/analysis/tco.h"

namespace trnsim::analysis {

struct PricedSystem {
  std::optional<double> on_demand_usd_per_hour, reserved_usd_per_hour;  // per instance
  bool on_demand_estimate = false, reserved_estimate = false;
  std::string on_demand_source, reserved_source;
};

// `estimates`: system name -> on-demand USD per instance-hour given by the user.
PricedSystem price_system(const SystemCostFacts& s, bool gpu, const std::map<std::string, double>& estimates);

// "a=1.5,b=2" -> {a: 1.5, b: 2}; ConfigError naming `option` on a bad item.
std::map<std::string, double> parse_system_numbers(const std::string& text, const std::string& option);

}  // namespace trnsim::analysis
