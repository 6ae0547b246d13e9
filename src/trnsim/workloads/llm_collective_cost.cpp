#include "trnsim/workloads/llm_collective_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "trnsim/collectives/collective.h"
#include "trnsim/hw/spec_json.h"
#include "trnsim/workloads/llm_cost_cache.h"

namespace trnsim::workloads {

using collectives::Op;

CollectiveCosts::CollectiveCosts(const hw::SystemSpec& system, int lcores_per_chip, bool use_disk_cache)
    : system_(system), lcores_per_chip_(lcores_per_chip) {
  // Fingerprint of the collectives model: one all-reduce timed uncached (as NodeCosts does).
  cache_ = std::make_unique<CostCache>("", false);
  const double probe = measure(Op::AllReduce, 2, 1 << 16).s;
  const std::string scope =
      fmt::format("{}-{:016x}-{:08x}-rpc{}-collectives", system.name, std::hash<std::string>{}(hw::to_json(system).dump()),
                  std::hash<std::string>{}(fmt::format("{:.17g}", probe)) & 0xffffffffu, lcores_per_chip);
  cache_ = std::make_unique<CostCache>(scope, use_disk_cache);
}

CollectiveCosts::~CollectiveCosts() = default;

// Cache line values: seconds, then the fabric units' energy.
constexpr EnergyUnit kFabricUnits[] = {EnergyUnit::HBM, EnergyUnit::NeuronLink, EnergyUnit::Switch, EnergyUnit::EFA};

NodeCost CollectiveCosts::measure(collectives::Op op, int ranks, int64_t bytes) {
  const std::string key = fmt::format("{}:ranks={},bytes={}", collectives::name(op), ranks, bytes);
  // time-only lines: measured again
  const std::vector<double> v = cache_->get_or_measure(key, 1 + std::size(kFabricUnits), [=, this] {  // by value: see cost_plan.h
    collectives::CollectiveOptions o;
    o.op = op;
    o.ranks = ranks;
    o.ranks_per_chip = std::min(ranks, lcores_per_chip_);
    o.dtype = numerics::DType::BF16;
    o.launch = collectives::Launch::InProgram;  // TP/EP collectives run inside the compiled model
    const collectives::CollectiveResult r = collectives::CollectiveRunner(system_, o).time(bytes);
    const UnitEnergy e = UnitEnergy::dynamic_of(r.energy_by_unit_j);
    std::vector<double> values{r.time_s};
    for (EnergyUnit u : kFabricUnits) values.push_back(e[u]);
    return values;
  });
  NodeCost c{v[0], {}};
  for (size_t i = 0; i < std::size(kFabricUnits); ++i) c.e[kFabricUnits[i]] = v[i + 1];
  return c;
}

NodeCost CollectiveCosts::cost(collectives::Op op, int ranks, int64_t bytes) {
  if (ranks <= 1 || bytes <= 0) return {};
  // Grid: piece x 2^j, the piece being one bf16 element per rank (sizes divide into pieces).
  const int64_t piece = 2LL * ranks;
  int64_t lo = piece;
  while (lo * 2 <= bytes) lo *= 2;
  if (bytes <= lo) return measure(op, ranks, lo);
  const int64_t hi = lo * 2;
  const NodeCost flo = measure(op, ranks, lo), fhi = measure(op, ranks, hi);
  return flo + (fhi - flo) * static_cast<double>(bytes - lo) / static_cast<double>(hi - lo);
}

}  // namespace trnsim::workloads
