#include "trnsim/analysis/compare_price.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "trnsim/common/error.h"

namespace trnsim::analysis {

namespace {
// The GPU whose price anchors the Trainium estimate, and the claim's ratio.
constexpr const char* kAnchor = "p5.48xlarge";
constexpr double kTrainiumShareOfGpuHour = 1.0 / 3.0;
}  // namespace

std::map<std::string, double> parse_system_numbers(const std::string& text, const std::string& option) {
  std::map<std::string, double> out;
  for (size_t pos = 0; pos < text.size();) {
    const size_t c = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, c - pos);
    const size_t eq = item.find('=');
    char* end = nullptr;
    const double v = eq == std::string::npos ? 0 : std::strtod(item.c_str() + eq + 1, &end);
    if (eq == std::string::npos || eq == 0 || end == item.c_str() + eq + 1 || *end || !(v > 0) || !std::isfinite(v))
      throw ConfigError(fmt::format("{} '{}': expected SYSTEM=NUMBER[,SYSTEM=NUMBER...] with NUMBER > 0", option, item));
    out[item.substr(0, eq)] = v;
    pos = c + 1;
  }
  return out;
}

PricedSystem price_system(const SystemCostFacts& s, bool gpu, const std::map<std::string, double>& estimates) {
  PricedSystem p;
  const SystemCostFacts anchor = load_cost_facts(kAnchor);
  // Reserved rates are estimates in every config; the same discount is applied to estimates.
  const double discount = anchor.reserved_usd_per_hour.value_or(0) / anchor.on_demand_usd_per_hour.value_or(1);
  if (auto it = estimates.find(s.name); it != estimates.end()) {
    p.on_demand_usd_per_hour = it->second;
    p.on_demand_estimate = true;
    p.on_demand_source = fmt::format("estimate given by --price-estimate {}={:g}", s.name, it->second);
  } else if (s.on_demand_usd_per_hour) {
    p.on_demand_usd_per_hour = s.on_demand_usd_per_hour;
    p.on_demand_source = fmt::format("published us-east-1 on-demand price (HARDWARE.md, config of {})", s.name);
  } else if (!gpu && anchor.on_demand_usd_per_hour) {
    const double per_chip = *anchor.on_demand_usd_per_hour / anchor.chips_per_instance * kTrainiumShareOfGpuHour;
    p.on_demand_usd_per_hour = per_chip * s.chips_per_instance;
    p.on_demand_estimate = true;
    p.on_demand_source = fmt::format(
        "ESTIMATE: no published on-demand price for {}; 1/3 of an H100-hour ({} {:g} USD/h / {} GPUs / 3 = {:.4g} USD "
        "per chip-hour, issue 15's 'Trainium at roughly a third of an H100's hourly price') x {} chips; "
        "replace with --price-estimate {}=USD_PER_HOUR",
        s.name, kAnchor, *anchor.on_demand_usd_per_hour, anchor.chips_per_instance, per_chip, s.chips_per_instance, s.name);
  } else {
    p.on_demand_source = fmt::format("no price for {} in its config; give --price-estimate {}=USD_PER_HOUR", s.name, s.name);
  }
  if (s.reserved_usd_per_hour && !p.on_demand_estimate) {
    p.reserved_usd_per_hour = s.reserved_usd_per_hour;
    p.reserved_source = fmt::format("estimate in the config of {} (price_reserved: ~40% below on-demand, no published table)", s.name);
  } else if (p.on_demand_usd_per_hour) {
    p.reserved_usd_per_hour = *p.on_demand_usd_per_hour * discount;
    p.reserved_source = fmt::format("ESTIMATE: on-demand x {:.4f} ({}'s reserved/on-demand ratio)", discount, kAnchor);
  } else {
    p.reserved_source = p.on_demand_source;
  }
  p.reserved_estimate = true;  // no reserved price in the reference is published
  return p;
}

}  // namespace trnsim::analysis
