// The scale-up fabric of one system, behind one interface so a config picks the implementation
// by name (DESIGN principle 1): "torus2d", "torus3d", "ring" (torus_topology.cpp), "switch"
// (switch_topology.cpp), "single" (single_topology.cpp). The scale-out level (EFA between
// systems) wraps any of them (hierarchical_topology.h).
//
// Contract: chips are 0..chips()-1; route(a, b) appends the directed links a message from chip a
// to chip b crosses, in order, deterministically, and nothing when a == b; every link index is
// < links().size(). ring_order() lists every chip once such that consecutive chips (and the
// last and first) are as close as the topology allows; ring algorithms follow it.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "trnsim/fabric/link.h"
#include "trnsim/hw/chip_spec.h"

namespace trnsim::fabric {

class ITopology {
 public:
  virtual ~ITopology() = default;
  virtual std::string_view kind() const = 0;
  virtual int chips() const = 0;
  virtual const std::vector<Link>& links() const = 0;
  virtual void route(int a, int b, std::vector<int>& out) const = 0;
  virtual std::vector<int> ring_order() const;  // default: 0, 1, ..., chips()-1
  virtual std::string describe() const = 0;     // one line, e.g. "4x4 torus, 96 GB/s per link"

  int hops(int a, int b) const;  // route length
};

using TopologyFactory = std::function<std::unique_ptr<ITopology>(const hw::TopologySpec&, int chips)>;

// Builds the topology registered under spec.kind; ConfigError naming the known kinds otherwise.
std::unique_ptr<ITopology> make_topology(const hw::TopologySpec& spec, int chips);
std::vector<std::string> topology_kinds();
// For implementations (and users' own topologies): a later registration of a name replaces it.
void register_topology(std::string kind, TopologyFactory factory);

}  // namespace trnsim::fabric
