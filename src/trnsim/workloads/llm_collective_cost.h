// Collective costs of an LLM step (TP all-reduce and all-gather, EP all-to-all, PP send/recv)
// from the collectives layer on the system's fabric, timed on a grid of sizes (powers of two
// times the ranks' piece) and interpolated; cached on disk beside the node costs.
#pragma once
#include <map>
#include <memory>
#include <tuple>

#include "trnsim/collectives/collective_op.h"
#include "trnsim/hw/chip_spec.h"
#include "trnsim/workloads/llm_node_cost.h"

namespace trnsim::workloads {

class CostCache;

class CollectiveCosts {
 public:
  CollectiveCosts(const hw::SystemSpec& system, int lcores_per_chip, bool use_disk_cache);
  ~CollectiveCosts();
  // Seconds for `bytes` (of bf16) per rank over `ranks` consecutive logical cores; 0 for 1 rank.
  double seconds(collectives::Op op, int ranks, int64_t bytes) { return cost(op, ranks, bytes).s; }
  // The same with the fabric's energy (all ranks: HBM at both ends, links, switches, EFA;
  // no static power), interpolated alike.
  NodeCost cost(collectives::Op op, int ranks, int64_t bytes);

 private:
  NodeCost measure(collectives::Op op, int ranks, int64_t bytes);
  const hw::SystemSpec& system_;
  int lcores_per_chip_;
  std::unique_ptr<CostCache> cache_;
};

}  // namespace trnsim::workloads
