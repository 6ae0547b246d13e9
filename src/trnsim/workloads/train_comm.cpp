#include "trnsim/workloads/train_comm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "trnsim/common/error.h"

namespace trnsim::workloads {

GroupPlacement place_group(const TrainLayout& l, int ranks, int64_t stride) {
  GroupPlacement g;
  g.ranks = ranks;
  // Consecutive members are `stride` ranks apart: a node of C ranks holds C / stride of them.
  g.per_node = int(std::clamp<int64_t>(l.cores_per_node / std::max<int64_t>(stride, 1), 1, ranks));
  g.nodes = (ranks + g.per_node - 1) / g.per_node;
  g.per_chip = int(std::clamp<int64_t>(l.cores_per_chip / std::max<int64_t>(stride, 1), 1, ranks));
  return g;
}

TrainFabric::TrainFabric(const hw::SystemSpec& system, const TrainLayout& layout, double oversub, double degradation)
    : sys_(system), layout_(layout), costs_(collectives::collective_costs(system, numerics::DType::BF16,
                                                                           layout.cores_per_chip)) {
  if (!(oversub >= 1.0))
    throw ConfigError(fmt::format("train: --efa-oversubscription: expected >= 1, got {}", oversub));
  if (!(degradation > 0.0 && degradation <= 1.0))
    throw ConfigError(fmt::format("train: --degraded-link: expected a bandwidth factor in (0, 1], got {}", degradation));
  const int nodes = layout.ranks / layout.cores_per_node;
  // Every rank of a chip runs its own group's collective at once: they share the chip's CC path
  // and NeuronLink ports.
  double intra = costs_.chip_dma_bandwidth.value() / layout.cores_per_chip;
  if (system.chips > 1) intra = std::min(intra, system.topology.bandwidth_per_chip.value() / layout.cores_per_chip);
  intra_gbps_ = intra;
  if (nodes > 1) {
    if (system.scale_out.kind == "none" || !(system.scale_out.bandwidth_per_instance.value() > 0))
      throw ConfigError(fmt::format("train: --nodes {}: system {} has no scale-out network figure (scale_out: none); "
                                    "give one in a system YAML", nodes, system.name));
    const double node_gbps = system.scale_out.bandwidth_per_instance.value() * system.instances();
    inter_gbps_ = std::min(intra, node_gbps * degradation / oversub / layout.cores_per_node);
    efa_latency_ns_ = system.scale_out.latency.value();
  }
}

double TrainFabric::step_ns() const {
  return costs_.sync_handshake.value() + costs_.cc_step.value() + costs_.descriptor_setup.value();
}

CommTime TrainFabric::ring_phase(int n, double piece, double gbps, double latency) const {
  CommTime c;
  if (n <= 1) return c;
  c.fixed_ns = (n - 1) * (step_ns() + latency);
  c.time_ns = (n - 1) * piece / gbps + c.fixed_ns;
  c.bytes_sent_per_rank = (n - 1) * piece;
  return c;
}

namespace {
CommTime operator+(CommTime a, const CommTime& b) {
  a.time_ns += b.time_ns, a.fixed_ns += b.fixed_ns, a.bytes_sent_per_rank += b.bytes_sent_per_rank;
  return a;
}
}  // namespace

// One half (reduce-scatter or all-gather) of an all-reduce of `bytes` across N nodes: a ring
// (N-1 steps) or recursive halving/doubling (ceil(log2 N) steps, same bytes), the faster.
CommTime TrainFabric::inter_all_reduce(int nodes, double bytes) const {
  CommTime ring = ring_phase(nodes, bytes / nodes, inter_gbps_, efa_latency_ns_);
  if (nodes <= 2) return ring;
  CommTime hd = ring;
  const int steps = int(std::ceil(std::log2(double(nodes))));
  hd.fixed_ns = steps * (step_ns() + efa_latency_ns_);
  hd.time_ns = ring.bytes_sent_per_rank / inter_gbps_ + hd.fixed_ns;
  return hd.time_ns < ring.time_ns ? hd : ring;
}

CommTime TrainFabric::reduce_scatter(const GroupPlacement& g, double bytes) const {
  if (g.ranks <= 1) return {};
  const double link_lat = sys_.topology.link_latency.value();
  CommTime c = ring_phase(g.per_node, bytes / g.per_node, intra_gbps_, link_lat) +
               inter_all_reduce(g.nodes, bytes / g.per_node);
  c.time_ns += costs_.launch.value();
  c.fixed_ns += costs_.launch.value();
  return c;
}

CommTime TrainFabric::all_gather(const GroupPlacement& g, double bytes) const {
  return reduce_scatter(g, bytes);  // the mirror image: same steps, same bytes
}

CommTime TrainFabric::all_reduce(const GroupPlacement& g, double bytes) const {
  if (g.ranks <= 1) return {};
  CommTime c = reduce_scatter(g, bytes) + all_gather(g, bytes);
  c.time_ns -= costs_.launch.value();  // one collective: one launch
  c.fixed_ns -= costs_.launch.value();
  return c;
}

CommTime TrainFabric::all_to_all(const GroupPlacement& g, double bytes) const {
  if (g.ranks <= 1) return {};
  const double n = g.ranks, k = g.per_node;
  const double intra = bytes * (k - 1) / n, inter = bytes * (n - k) / n;
  CommTime c;
  c.fixed_ns = costs_.launch.value() + step_ns() +
               (g.nodes > 1 ? efa_latency_ns_ : sys_.topology.link_latency.value() * 2);
  c.time_ns = c.fixed_ns + intra / intra_gbps_ + (inter > 0 ? inter / inter_gbps_ : 0.0);
  c.bytes_sent_per_rank = intra + inter;
  return c;
}

CommTime TrainFabric::send(double bytes, bool across_nodes) const {
  CommTime c;
  c.fixed_ns = step_ns() + (across_nodes ? efa_latency_ns_ : sys_.topology.link_latency.value());
  c.time_ns = c.fixed_ns + bytes / (across_nodes ? inter_gbps_ : intra_gbps_);
  c.bytes_sent_per_rank = bytes;
  return c;
}

std::string TrainFabric::describe() const {
  return fmt::format("{:.1f} GB/s per rank in a node, {:.2f} GB/s per rank across nodes", intra_gbps_, inter_gbps_);
}

}  // namespace trnsim::workloads
