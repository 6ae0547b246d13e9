#include "trnsim/fabric/fabric.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/fabric/hierarchical_topology.h"

namespace trnsim::fabric {

Fabric::Fabric(const hw::SystemSpec& sys, const FabricOptions& o)
    : chips_per_instance_(sys.chips_per_instance), chips_per_system_(sys.chips) {
  if (o.systems < 1) throw ConfigError(fmt::format("systems must be >= 1, got {}", o.systems));
  // Links and ranks are built per chip (about 1 KB each) before any algorithm is chosen: 2^20
  // systems took 4.5 GB and 44 s to be refused there, and chips past 2^31 wrapped an int.
  if (static_cast<int64_t>(sys.chips) * o.systems > kMaxChips)
    throw ConfigError(fmt::format("{} systems of {} = {} chips: the largest fabric trnsim builds has {} chips", o.systems,
                                  sys.name, static_cast<int64_t>(sys.chips) * o.systems, kMaxChips));
  if (o.ranks_per_chip < 0)
    throw ConfigError(fmt::format("ranks per chip {}: expected > 0 (or 0 for the chip's NeuronCores)", o.ranks_per_chip));
  auto inner = make_topology(sys.topology, sys.chips);
  if (o.systems == 1)
    topology_ = std::move(inner);
  else
    topology_ = std::make_unique<HierarchicalTopology>(std::move(inner), o.systems, sys.chips_per_instance,
                                                       sys.scale_out);
  const int cores = sys.chip.neuron_cores;
  ranks_per_chip_ = o.ranks_per_chip > 0 ? o.ranks_per_chip : cores;
  if (ranks_per_chip_ > cores)
    throw ConfigError(fmt::format("{} ranks per chip, but a {} chip has {} NeuronCores", ranks_per_chip_,
                                  sys.chip.name, cores));
  const long capacity = static_cast<long>(ranks_per_chip_) * topology_->chips();
  ranks_ = o.ranks > 0 ? o.ranks : static_cast<int>(capacity);
  if (ranks_ > capacity)
    throw ConfigError(fmt::format("{} ranks exceed {}: {} chip{} x {} rank{} per chip = {}", ranks_,
                                  o.systems > 1 ? fmt::format("{} x {}", o.systems, sys.name) : sys.name,
                                  topology_->chips(), topology_->chips() > 1 ? "s" : "", ranks_per_chip_,
                                  ranks_per_chip_ > 1 ? "s" : "", capacity));
  for (const Link& l : topology_->links())
    net_.add_resource(l.bandwidth);
  hbm_j_ = sys.chip.energy.hbm_per_byte.value();
  link_j_ = sys.chip.energy.link_per_byte.value();
  switch_j_ = sys.energy.switch_per_byte.value();
  scale_out_j_ = sys.energy.scale_out_per_byte.value();
  if (!(o.chip_dma_bandwidth.value() > 0)) throw ConfigError("fabric: the chip DMA bandwidth must be > 0");
  for (int c = 0; c < topology_->chips(); ++c) net_.add_resource(o.chip_dma_bandwidth);
}

std::string Fabric::describe() const {
  return fmt::format("{}; {} ranks, {} per chip", topology_->describe(), ranks_, ranks_per_chip_);
}

std::vector<int> Fabric::ring_order() const {
  std::vector<int> order;
  order.reserve(ranks_);
  for (int chip : topology_->ring_order())
    for (int k = 0; k < ranks_per_chip_; ++k) {
      const int r = chip * ranks_per_chip_ + k;
      if (r < ranks_) order.push_back(r);
    }
  return order;
}

void Fabric::path(int src, int dst, std::vector<int>& resources, sim::Time& latency) const {
  resources.clear();
  latency = sim::Time();
  if (src == dst) return;
  const int a = chip_of(src), b = chip_of(dst);
  resources.push_back(dma_resource(a));
  route_.clear();
  topology_->route(a, b, route_);
  double ns = 0;
  for (int l : route_) {
    resources.push_back(l);
    ns += topology_->links()[l].latency.value();
  }
  latency = sim::Time::from_ns(ns, "the summed link latency of a route (topology latency)");
}

void Fabric::tally_energy(int src, int dst, double bytes, LinkEnergy& out) const {
  if (src == dst) return;
  out.hbm_j += 2 * bytes * hbm_j_;
  const int a = chip_of(src), b = chip_of(dst);
  if (a == b) return;
  route_.clear();
  topology_->route(a, b, route_);
  for (int l : route_) {
    const std::string& kind = topology_->links()[l].kind;
    if (kind == "efa-tx") out.scale_out_j += bytes * scale_out_j_;
    else if (kind == "efa-rx") continue;
    else {
      out.neuronlink_j += bytes * link_j_;
      if (kind.ends_with("up")) out.switch_j += bytes * switch_j_;
    }
  }
}

void Fabric::send(int src, int dst, Bytes bytes, sim::Time at, uint64_t tag) {
  if (src < 0 || src >= ranks_ || dst < 0 || dst >= ranks_)
    throw Error(fmt::format("fabric: transfer {} -> {} outside ranks 0..{}", src, dst, ranks_ - 1));
  sim::Time latency;
  path(src, dst, scratch_, latency);
  net_.start(at, scratch_, src == dst ? 0.0 : bytes.value(), latency, tag);
}

}  // namespace trnsim::fabric
