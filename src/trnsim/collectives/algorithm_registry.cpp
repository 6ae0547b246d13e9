// Name -> algorithm. Built-ins are registered by explicit calls: the linker drops unreferenced
// objects of a static library, and with them any static self-registration.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "trnsim/collectives/group.h"
#include "trnsim/collectives/i_collective_algorithm.h"
#include "trnsim/common/error.h"

namespace trnsim::collectives {

void register_ring_algorithm();
void register_direct_algorithm();
void register_halving_doubling_algorithm();
void register_hierarchical_algorithms();

namespace {
std::vector<std::unique_ptr<ICollectiveAlgorithm>>& table() {
  static std::vector<std::unique_ptr<ICollectiveAlgorithm>> t;
  return t;
}
void ensure_builtins() {
  static bool done = [] {
    register_ring_algorithm();
    register_direct_algorithm();
    register_halving_doubling_algorithm();
    register_hierarchical_algorithms();
    return true;
  }();
  (void)done;
}
}  // namespace

void register_algorithm(std::unique_ptr<ICollectiveAlgorithm> a) {
  auto& t = table();
  auto it = std::find_if(t.begin(), t.end(), [&](auto& x) { return x->name() == a->name(); });
  if (it != t.end())
    *it = std::move(a);
  else
    t.push_back(std::move(a));
}

std::vector<std::string> algorithm_names() {
  ensure_builtins();
  std::vector<std::string> out;
  for (auto& a : table()) out.emplace_back(a->name());
  return out;
}

const ICollectiveAlgorithm& algorithm(std::string_view name) {
  ensure_builtins();
  for (auto& a : table())
    if (a->name() == name) return *a;
  throw UnsupportedError(fmt::format("unknown collective algorithm '{}'; expected one of: {} (or auto)", name,
                                     fmt::join(algorithm_names(), ", ")));
}

Group whole_group(const CollectiveJob& job) {
  Group g;
  g.members.resize(job.ranks());
  std::iota(g.members.begin(), g.members.end(), 0);
  g.ring = job.fabric->ring_order();  // rank r is member r
  g.base = 0;
  g.count = job.count;
  return g;
}

}  // namespace trnsim::collectives
