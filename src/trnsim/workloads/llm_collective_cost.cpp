#include "trnsim/workloads/llm_collective_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "trnsim/collectives/collective.h"
#include "trnsim/hw/spec_json.h"
#include "trnsim/workloads/llm_cost_cache.h"

namespace trnsim::workloads {

CollectiveCosts::CollectiveCosts(const hw::SystemSpec& system, int lcores_per_chip, bool use_disk_cache)
    : system_(system), lcores_per_chip_(lcores_per_chip) {
  const std::string scope = fmt::format("{}-{:016x}-rpc{}-collectives", system.name,
                                        std::hash<std::string>{}(hw::to_json(system).dump()), lcores_per_chip);
  cache_ = std::make_unique<CostCache>(scope, use_disk_cache);
}

CollectiveCosts::~CollectiveCosts() = default;

double CollectiveCosts::measure(collectives::Op op, int ranks, int64_t bytes) {
  const std::string key = fmt::format("{}:ranks={},bytes={}", collectives::name(op), ranks, bytes);
  if (auto v = cache_->get(key)) return *v;
  collectives::CollectiveOptions o;
  o.op = op;
  o.ranks = ranks;
  o.ranks_per_chip = std::min(ranks, lcores_per_chip_);
  o.dtype = numerics::DType::BF16;
  const double s = collectives::CollectiveRunner(system_, o).time(bytes).time_s;
  cache_->put(key, s);
  return s;
}

double CollectiveCosts::seconds(collectives::Op op, int ranks, int64_t bytes) {
  if (ranks <= 1 || bytes <= 0) return 0;
  // Grid: piece x 2^j, the piece being one bf16 element per rank (sizes divide into pieces).
  const int64_t piece = 2LL * ranks;
  int64_t lo = piece;
  while (lo * 2 <= bytes) lo *= 2;
  if (bytes <= lo) return measure(op, ranks, lo);
  const int64_t hi = lo * 2;
  const double flo = measure(op, ranks, lo), fhi = measure(op, ranks, hi);
  return flo + (fhi - flo) * static_cast<double>(bytes - lo) / static_cast<double>(hi - lo);
}

}  // namespace trnsim::workloads
