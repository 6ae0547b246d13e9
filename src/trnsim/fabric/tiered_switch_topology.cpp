#include "trnsim/fabric/tiered_switch_topology.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"

namespace trnsim::fabric {

TieredSwitchTopology::TieredSwitchTopology(int chips, int chips_per_server, int servers_per_rack,
                                           const std::vector<hw::SwitchTierSpec>& tiers)
    : chips_(chips), chips_per_server_(chips_per_server), chips_per_rack_(chips_per_server * servers_per_rack) {
  if (chips < 1) throw ConfigError("topology tiered_switch: needs at least one chip");
  if (chips_per_server < 1 || servers_per_rack < 1)
    throw ConfigError(fmt::format("topology tiered_switch: chips_per_server ({}) and servers_per_rack ({}) must be >= 1",
                                  chips_per_server, servers_per_rack));
  if (chips % chips_per_rack_ != 0)
    throw ConfigError(fmt::format("topology tiered_switch: {} chips are not whole racks of {} x {} chips", chips,
                                  chips_per_server, servers_per_rack));
  if (tiers.size() != kTiers)
    throw ConfigError(fmt::format("topology tiered_switch: needs {} tiers (server, rack, cross-rack), got {}", kTiers,
                                  tiers.size()));
  for (int t = 0; t < kTiers; ++t) {
    names_[t] = tiers[t].name;
    if (!(tiers[t].bandwidth_per_chip.value() > 0))
      throw ConfigError(fmt::format("topology tiered_switch: tier {} bandwidth_per_chip must be > 0", tiers[t].name));
  }
  // Node numbering (for reports): chips, then one switch node per tier.
  for (int c = 0; c < chips; ++c)
    for (int t = 0; t < kTiers; ++t) {
      const int sw = chips + t;
      links_.push_back({c, sw, tiers[t].bandwidth_per_chip, tiers[t].latency, tiers[t].name + "-up"});
      links_.push_back({sw, c, tiers[t].bandwidth_per_chip, tiers[t].latency, tiers[t].name + "-down"});
    }
}

int TieredSwitchTopology::tier_of(int a, int b) const {
  if (a / chips_per_server_ == b / chips_per_server_) return 0;
  if (a / chips_per_rack_ == b / chips_per_rack_) return 1;
  return 2;
}

void TieredSwitchTopology::route(int a, int b, std::vector<int>& out) const {
  if (a == b) return;
  const int t = tier_of(a, b);
  out.push_back(uplink(a, t));
  out.push_back(downlink(b, t));
}

std::string TieredSwitchTopology::describe() const {
  std::string tiers;
  for (int t = 0; t < kTiers; ++t)
    tiers += fmt::format("{}{} {:g} GB/s", t ? ", " : "", names_[t], links_[uplink(0, t)].bandwidth.value());
  return fmt::format("tiered switch ({} chips: {} rack{} x {} servers x {} chips), per chip up and down: {}", chips_,
                     chips_ / chips_per_rack_, chips_ / chips_per_rack_ > 1 ? "s" : "",
                     chips_per_rack_ / chips_per_server_, chips_per_server_, tiers);
}

void register_tiered_switch_topology() {
  register_topology("tiered_switch", [](const hw::TopologySpec& s, int chips) -> std::unique_ptr<ITopology> {
    return std::make_unique<TieredSwitchTopology>(chips, s.chips_per_server, s.servers_per_rack, s.tiers);
  });
}

}  // namespace trnsim::fabric
