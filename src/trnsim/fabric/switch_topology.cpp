#include "trnsim/fabric/switch_topology.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"

namespace trnsim::fabric {

SwitchTopology::SwitchTopology(int chips, GBps bw, Nanoseconds latency) : chips_(chips) {
  if (chips < 1) throw ConfigError("topology switch: needs at least one chip");
  if (chips > 1 && bw.value() <= 0) throw ConfigError("topology switch: bandwidth_per_chip must be > 0");
  const int sw = chips;  // the switch is the node after the chips
  for (int c = 0; c < chips; ++c) {
    links_.push_back({c, sw, bw, latency, "up"});
    links_.push_back({sw, c, bw, latency, "down"});
  }
}

void SwitchTopology::route(int a, int b, std::vector<int>& out) const {
  if (a == b) return;
  out.push_back(uplink(a));
  out.push_back(downlink(b));
}

std::string SwitchTopology::describe() const {
  return fmt::format("switch ({} chips), {:g} GB/s per chip up and down", chips_,
                     links_.empty() ? 0.0 : links_[0].bandwidth.value());
}

void register_switch_topology() {
  register_topology("switch", [](const hw::TopologySpec& s, int chips) -> std::unique_ptr<ITopology> {
    return std::make_unique<SwitchTopology>(chips, s.bandwidth_per_chip, s.link_latency);
  });
}

}  // namespace trnsim::fabric
