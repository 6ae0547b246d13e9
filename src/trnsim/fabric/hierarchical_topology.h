// The scale-out level: `systems` copies of one system's scale-up fabric (a trn2.48xlarge torus,
// a Trn2 UltraServer, ...) joined by EFA, as in an UltraCluster. Each instance (a server of
// chips_per_instance chips) has one EFA port into a non-blocking network: a transmit link and
// a receive link of the instance's EFA bandwidth, shared by all its chips, each carrying half of
// the one-way EFA latency. Chips reach their instance's NICs over PCIe, which is not the
// bottleneck and is not modelled. A message between systems crosses [tx(src instance),
// rx(dst instance)]; inside a system it takes the inner topology's route.
#pragma once
#include <memory>

#include "trnsim/fabric/i_topology.h"

namespace trnsim::fabric {

class HierarchicalTopology : public ITopology {
 public:
  HierarchicalTopology(std::unique_ptr<ITopology> inner, int systems, int chips_per_instance,
                       const hw::ScaleOutSpec& scale_out);

  std::string_view kind() const override { return "hierarchical"; }
  int chips() const override { return inner_chips_ * systems_; }
  const std::vector<Link>& links() const override { return links_; }
  void route(int a, int b, std::vector<int>& out) const override;
  std::vector<int> ring_order() const override;  // each system's ring order, system after system
  std::string describe() const override;

  const ITopology& inner() const { return *inner_; }
  int systems() const { return systems_; }
  int instance_of(int chip) const { return chip / chips_per_instance_; }
  int tx_link(int instance) const { return efa_base_ + 2 * instance; }
  int rx_link(int instance) const { return efa_base_ + 2 * instance + 1; }

 private:
  std::unique_ptr<ITopology> inner_;
  int systems_;
  int inner_chips_;
  int inner_links_;
  int chips_per_instance_;
  int efa_base_;
  std::vector<Link> links_;
  mutable std::vector<int> scratch_;
};

}  // namespace trnsim::fabric
