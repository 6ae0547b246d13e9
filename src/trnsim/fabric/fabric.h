// The network of one job: `ranks` ranks (NeuronCores, as nccom-test counts them) placed in order
// on the chips of `systems` copies of a system (rank r on chip r / ranks_per_chip), the system's
// scale-up topology (registered by name, i_topology.h), the EFA level between copies
// (hierarchical_topology.h), and one collective-DMA resource per chip. Every transfer a rank
// sends crosses its chip's collective-DMA resource first: that is the path through which the
// collective-communication cores move data, shared by all the chip's ranks; a transfer between
// two ranks of one chip crosses only it (through HBM), one between chips then crosses the links
// of its route. It implements INetwork on a max-min fair FlowNetwork.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "trnsim/fabric/i_network.h"
#include "trnsim/fabric/i_topology.h"
#include "trnsim/hw/chip_spec.h"

namespace trnsim::fabric {

struct FabricOptions {
  int systems = 1;             // copies of the system joined by its scale-out network (EFA)
  int ranks = 0;               // 0: every NeuronCore of every chip
  int ranks_per_chip = 0;      // 0: the chip's NeuronCores (nccom-test's ranks)
  GBps chip_dma_bandwidth;     // the collective-DMA resource of each chip (required)
};

// The most chips a fabric is built for (2^20: past the largest Trainium clusters announced,
// about 500,000 Trainium2 chips); more is a ConfigError before anything is allocated.
inline constexpr int64_t kMaxChips = int64_t{1} << 20;

class Fabric : public INetwork {
 public:
  Fabric(const hw::SystemSpec& system, const FabricOptions& options);

  int ranks() const override { return ranks_; }
  int ranks_per_chip() const { return ranks_per_chip_; }
  int chips_used() const { return (ranks_ + ranks_per_chip_ - 1) / ranks_per_chip_; }
  int chip_of(int rank) const { return rank / ranks_per_chip_; }
  bool crosses_chips(int src, int dst) const override { return chip_of(src) != chip_of(dst); }
  int ranks_per_instance() const { return ranks_per_chip_ * chips_per_instance_; }
  int ranks_per_system() const { return ranks_per_chip_ * chips_per_system_; }
  const ITopology& topology() const { return *topology_; }
  std::string describe() const;

  // The ranks in the order a ring should visit them: chips along the topology's ring order,
  // the ranks of one chip next to each other.
  std::vector<int> ring_order() const;
  // Resources crossed and delay of a transfer from src to dst (empty path when src == dst).
  void path(int src, int dst, std::vector<int>& resources, sim::Time& latency) const;
  int dma_resource(int chip) const { return static_cast<int>(topology_->links().size()) + chip; }

  void send(int src, int dst, Bytes bytes, sim::Time at, uint64_t tag) override;
  bool advance(std::vector<Delivery>& delivered) override { return net_.advance(delivered); }
  sim::Time now() const override { return net_.now(); }
  void reset() override { net_.reset(); }
  const FlowNetwork& network() const { return net_; }
  // HBM at both ends (two ranks of one chip: HBM only), each link traversed (link_per_byte),
  // each switch crossed (switch_per_byte, counted on the uplink), EFA bytes sent.
  void tally_energy(int src, int dst, double bytes, LinkEnergy& out) const override;

 private:
  std::unique_ptr<ITopology> topology_;
  int ranks_ = 0;
  int ranks_per_chip_ = 1;
  int chips_per_instance_ = 1;
  int chips_per_system_ = 1;
  FlowNetwork net_;
  double hbm_j_ = 0, link_j_ = 0, switch_j_ = 0, scale_out_j_ = 0;  // per byte
  mutable std::vector<int> route_;
  std::vector<int> scratch_;
};

}  // namespace trnsim::fabric
