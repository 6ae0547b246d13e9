// Collectives of a training job in closed form over the hierarchical fabric: a group of ranks
// (tensor, data, expert, context, pipeline) spans k ranks in each of N nodes; every group of the
// same kind runs at once, so a rank gets its chip's share of the collective DMA path inside a
// node and its node's share of EFA between nodes. All-reduce is hierarchical (reduce-scatter in
// the node, all-reduce of the 1/k piece across nodes by ring or halving-doubling, all-gather in
// the node), which sends exactly the flat ring's 2(n-1)/n S per rank. Fixed costs (launch,
// per-step sync) are the collectives layer's, calibrated to nccom-test. Closed forms, so a
// million-chip group costs the same to evaluate as a small one.
#pragma once
#include <cstdint>
#include <string>

#include "trnsim/collectives/collective_costs.h"
#include "trnsim/hw/chip_spec.h"
#include "trnsim/workloads/train_config.h"

namespace trnsim::workloads {

// Where the ranks of one group sit.
struct GroupPlacement {
  int ranks = 1;            // n
  int nodes = 1;            // N: nodes the group spans
  int per_node = 1;         // k = n / N
  int per_chip = 1;         // of the group's ranks on one chip
};

// A group of `ranks` whose members are `stride` apart in the rank order (tp fastest).
GroupPlacement place_group(const TrainLayout& l, int ranks, int64_t stride);

struct CommTime {
  double time_ns = 0;
  double bytes_sent_per_rank = 0;  // sum over the phases
  double fixed_ns = 0;             // launch and per-step costs within time_ns
};

class TrainFabric {
 public:
  // efa_oversubscription >= 1 divides a node's EFA bandwidth (a fat tree's taper);
  // link_degradation in (0, 1] scales the slowest node's EFA (a degraded link slows every
  // synchronous collective that crosses it).
  TrainFabric(const hw::SystemSpec& system, const TrainLayout& layout, double efa_oversubscription = 1.0,
              double link_degradation = 1.0);

  CommTime all_reduce(const GroupPlacement& g, double bytes) const;
  CommTime reduce_scatter(const GroupPlacement& g, double bytes) const;  // bytes: the whole input
  CommTime all_gather(const GroupPlacement& g, double bytes) const;      // bytes: the whole output
  CommTime all_to_all(const GroupPlacement& g, double bytes) const;      // bytes: the whole send buffer
  // One rank sends `bytes` to the next pipeline rank (`across_nodes`: over EFA).
  CommTime send(double bytes, bool across_nodes) const;

  double intra_rank_gbps() const { return intra_gbps_; }   // GB/s a rank gets inside a node
  double inter_rank_gbps() const { return inter_gbps_; }   // GB/s a rank gets across nodes
  std::string describe() const;

 private:
  CommTime ring_phase(int n, double piece_bytes, double gbps, double step_latency_ns) const;
  CommTime inter_all_reduce(int nodes, double bytes) const;
  double step_ns() const;

  const hw::SystemSpec& sys_;
  TrainLayout layout_;
  collectives::CollectiveCosts costs_;
  double intra_gbps_ = 0, inter_gbps_ = 0, efa_latency_ns_ = 0;
};

}  // namespace trnsim::workloads
