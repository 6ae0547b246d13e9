// The name -> factory table of topologies. Built-in implementations are registered here by an
// explicit call (not static initialisers), because the linker drops unreferenced objects of a
// static library and with them any self-registration.
#include <fmt/format.h>

#include <map>

#include "trnsim/common/error.h"
#include "trnsim/fabric/i_topology.h"

namespace trnsim::fabric {

void register_torus_topologies();
void register_switch_topology();
void register_tiered_switch_topology();
void register_single_topology();

namespace {
std::map<std::string, TopologyFactory, std::less<>>& table() {
  static std::map<std::string, TopologyFactory, std::less<>> t;
  return t;
}
void ensure_builtins() {
  static bool done = [] {
    register_torus_topologies();
    register_switch_topology();
    register_tiered_switch_topology();
    register_single_topology();
    return true;
  }();
  (void)done;
}
}  // namespace

void register_topology(std::string kind, TopologyFactory factory) { table()[std::move(kind)] = std::move(factory); }

std::vector<std::string> topology_kinds() {
  ensure_builtins();
  std::vector<std::string> out;
  for (auto& [k, _] : table()) out.push_back(k);
  return out;
}

std::unique_ptr<ITopology> make_topology(const hw::TopologySpec& spec, int chips) {
  ensure_builtins();
  auto it = table().find(spec.kind);
  if (it == table().end())
    throw ConfigError(fmt::format("topology kind '{}' is not known; expected one of: {}", spec.kind,
                                  fmt::join(topology_kinds(), ", ")));
  return it->second(spec, chips);
}

std::vector<int> ITopology::ring_order() const {
  std::vector<int> order(chips());
  for (int i = 0; i < chips(); ++i) order[i] = i;
  return order;
}

int ITopology::hops(int a, int b) const {
  std::vector<int> r;
  route(a, b, r);
  return static_cast<int>(r.size());
}

}  // namespace trnsim::fabric
