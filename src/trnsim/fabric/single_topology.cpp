// "single": one chip, no scale-up fabric (trn1.2xlarge). Collectives among its NeuronCores
// still run, through the chip's collective DMA path (fabric.h), never over a link.
#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/fabric/i_topology.h"

namespace trnsim::fabric {
namespace {

class SingleTopology : public ITopology {
 public:
  std::string_view kind() const override { return "single"; }
  int chips() const override { return 1; }
  const std::vector<Link>& links() const override { return links_; }
  void route(int, int, std::vector<int>&) const override {}
  std::string describe() const override { return "single chip (no scale-up links)"; }

 private:
  std::vector<Link> links_;
};

}  // namespace

void register_single_topology() {
  register_topology("single", [](const hw::TopologySpec&, int chips) -> std::unique_ptr<ITopology> {
    if (chips != 1) throw ConfigError(fmt::format("topology single: holds one chip, the system has {}", chips));
    return std::make_unique<SingleTopology>();
  });
}

}  // namespace trnsim::fabric
