// The router in front of the replicas, by name (--router): round-robin; least-outstanding
// (fewest requests queued or running, as vLLM's production-stack router and most load
// balancers); kv-aware (lowest KV-cache pressure: utilisation plus queued requests per
// sequence slot, and a replica that holds the request's cached prefix first).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "trnsim/workloads/serve_replica.h"

namespace trnsim::workloads {

class Router {
 public:
  explicit Router(std::string policy);
  // The replica for a request of prefix group `group` among `candidates` (non-empty).
  Replica* pick(const std::vector<Replica*>& candidates, int group, int max_seqs);
  static const std::vector<std::string>& names();

 private:
  std::string policy_;
  uint64_t next_ = 0;
};

}  // namespace trnsim::workloads
