#include "trnsim/workloads/serve_router.h"

#include <fmt/core.h>

#include <algorithm>

#include "trnsim/common/error.h"

namespace trnsim::workloads {

const std::vector<std::string>& Router::names() {
  static const std::vector<std::string> n{"round-robin", "least-outstanding", "kv-aware"};
  return n;
}

Router::Router(std::string policy) : policy_(std::move(policy)) {
  const auto& n = names();
  if (std::find(n.begin(), n.end(), policy_) == n.end())
    throw ConfigError(fmt::format("router '{}': expected round-robin, least-outstanding or kv-aware", policy_));
}

Replica* Router::pick(const std::vector<Replica*>& c, int group, int max_seqs) {
  if (policy_ == "round-robin") return c[next_++ % c.size()];
  // Ties go round-robin from the last pick, so equal replicas share the load.
  const size_t start = next_++ % c.size();
  Replica* best = nullptr;
  double best_score = 0;
  for (size_t k = 0; k < c.size(); ++k) {
    Replica* r = c[(start + k) % c.size()];
    double score = static_cast<double>(r->outstanding());
    if (policy_ == "kv-aware") {
      score = r->kv().utilization() + static_cast<double>(r->waiting()) / max_seqs;
      if (group >= 0 && r->kv().cached_prefix_blocks(group) > 0) score -= 0.5;
    }
    if (!best || score < best_score) best = r, best_score = score;
  }
  return best;
}

}  // namespace trnsim::workloads
