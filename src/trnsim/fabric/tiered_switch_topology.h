// A tiered NeuronSwitch (Trn3 UltraServer Gen2 as one AWS page breaks it down): chips are grouped
// into servers and servers into racks, and each chip has separate links per tier: in-server
// (tier 0), in-rack to other servers (tier 1), across racks (tier 2). A transfer uses the tier of
// the closest group its two chips share, crossing the sender's uplink and the receiver's downlink
// of that tier (like SwitchTopology, one switch per tier, non-blocking inside), so it pays the
// tier's latency twice. Flows share a chip's tier uplink or downlink max-min fairly; tiers never
// lend each other bandwidth (a link is wired to one tier's switch).
//
// Chips are numbered server-major (chip = (rack * servers_per_rack + server) * chips_per_server +
// k), so the default ring order 0..n-1 keeps each server's chips, then each rack's servers,
// together: a ring crosses racks only twice (the fewest a ring can) and servers as rarely as it can.
#pragma once
#include <array>

#include "trnsim/fabric/i_topology.h"

namespace trnsim::fabric {

class TieredSwitchTopology : public ITopology {
 public:
  static constexpr int kTiers = 3;  // server, rack, cross-rack

  // `tiers` in the order server, rack, cross-rack; chips a multiple of a rack's chips.
  TieredSwitchTopology(int chips, int chips_per_server, int servers_per_rack,
                       const std::vector<hw::SwitchTierSpec>& tiers);

  std::string_view kind() const override { return "tiered_switch"; }
  int chips() const override { return chips_; }
  const std::vector<Link>& links() const override { return links_; }
  void route(int a, int b, std::vector<int>& out) const override;
  std::string describe() const override;

  // 0: same server, 1: same rack, 2: different racks (a != b).
  int tier_of(int a, int b) const;
  static int uplink(int chip, int tier) { return 2 * (kTiers * chip + tier); }
  static int downlink(int chip, int tier) { return 2 * (kTiers * chip + tier) + 1; }

 private:
  int chips_;
  int chips_per_server_;
  int chips_per_rack_;
  std::array<std::string, kTiers> names_;
  std::vector<Link> links_;
};

}  // namespace trnsim::fabric
