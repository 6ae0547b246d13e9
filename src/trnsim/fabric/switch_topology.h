// A non-blocking switch (NeuronSwitch): every chip has one uplink into the switch and one
// downlink out of it, each carrying the chip's full scale-up bandwidth; any chip reaches any
// other in two link traversals (up, down) whatever their distance, and the switch core never
// limits (non-blocking). Contention happens only where several flows share a chip's uplink or
// downlink. This is the flat reading of Gen2 (one per-chip figure: the default preset
// configs/systems/trn3-ultraserver-gen2.yaml); its in-server / in-rack / cross-rack tiers are
// modelled by TieredSwitchTopology (tiered_switch_topology.h, preset trn3-ultraserver-gen2-tiered).
#pragma once
#include "trnsim/fabric/i_topology.h"

namespace trnsim::fabric {

class SwitchTopology : public ITopology {
 public:
  SwitchTopology(int chips, GBps bandwidth_per_chip, Nanoseconds link_latency);

  std::string_view kind() const override { return "switch"; }
  int chips() const override { return chips_; }
  const std::vector<Link>& links() const override { return links_; }
  void route(int a, int b, std::vector<int>& out) const override;
  std::string describe() const override;

  static int uplink(int chip) { return 2 * chip; }
  static int downlink(int chip) { return 2 * chip + 1; }

 private:
  int chips_;
  std::vector<Link> links_;
};

}  // namespace trnsim::fabric
