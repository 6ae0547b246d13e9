#include "trnsim/fabric/hierarchical_topology.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"

namespace trnsim::fabric {

HierarchicalTopology::HierarchicalTopology(std::unique_ptr<ITopology> inner, int systems, int chips_per_instance,
                                           const hw::ScaleOutSpec& so)
    : inner_(std::move(inner)),
      systems_(systems),
      inner_chips_(inner_->chips()),
      inner_links_(static_cast<int>(inner_->links().size())),
      chips_per_instance_(chips_per_instance) {
  if (systems < 1) throw ConfigError(fmt::format("scale-out: {} systems; need at least one", systems));
  if (chips_per_instance < 1 || inner_chips_ % chips_per_instance != 0)
    throw ConfigError(fmt::format("scale-out: {} chips per instance does not divide {} chips", chips_per_instance,
                                  inner_chips_));
  if (systems > 1 && (so.kind == "none" || so.bandwidth_per_instance.value() <= 0))
    throw ConfigError(fmt::format(
        "scale-out: the system has no scale-out network (kind '{}'), so {} copies cannot be joined; "
        "give its scale_out an EFA bandwidth",
        so.kind, systems));
  const int total_chips = inner_chips_ * systems_;
  links_.reserve(static_cast<size_t>(inner_links_) * systems_ + 2 * (total_chips / chips_per_instance));
  // Nodes past the chips (switches) get an offset per copy so that copies never share one.
  const int extra_nodes = inner_chips_ + 1;
  for (int s = 0; s < systems_; ++s) {
    for (const Link& l : inner_->links()) {
      auto map = [&](int n) {
        return n < inner_chips_ ? s * inner_chips_ + n : total_chips + s * extra_nodes + (n - inner_chips_);
      };
      links_.push_back({map(l.src), map(l.dst), l.bandwidth, l.latency, l.kind});
    }
  }
  efa_base_ = static_cast<int>(links_.size());
  const int net = total_chips + systems_ * extra_nodes;  // the EFA network as one node
  const Nanoseconds half = so.latency / 2;
  for (int i = 0; i < total_chips / chips_per_instance_; ++i) {
    const int nic = net + 1 + i;
    links_.push_back({nic, net, so.bandwidth_per_instance, half, "efa-tx"});
    links_.push_back({net, nic, so.bandwidth_per_instance, half, "efa-rx"});
  }
}

void HierarchicalTopology::route(int a, int b, std::vector<int>& out) const {
  const int sa = a / inner_chips_, sb = b / inner_chips_;
  if (sa != sb) {
    out.push_back(tx_link(instance_of(a)));
    out.push_back(rx_link(instance_of(b)));
    return;
  }
  scratch_.clear();
  inner_->route(a % inner_chips_, b % inner_chips_, scratch_);
  for (int l : scratch_) out.push_back(sa * inner_links_ + l);
}

std::vector<int> HierarchicalTopology::ring_order() const {
  std::vector<int> inner = inner_->ring_order(), order;
  order.reserve(static_cast<size_t>(inner_chips_) * systems_);
  for (int s = 0; s < systems_; ++s)
    for (int c : inner) order.push_back(s * inner_chips_ + c);
  return order;
}

std::string HierarchicalTopology::describe() const {
  return fmt::format("{} x [{}] joined by EFA, {:g} GB/s per instance of {} chips", systems_, inner_->describe(),
                     links_.empty() ? 0.0 : links_[efa_base_].bandwidth.value(), chips_per_instance_);
}

}  // namespace trnsim::fabric
