// A collective algorithm turns (op, count, placement) into a transfer schedule. Implementations
// are registered by name (DESIGN principle 1): "ring", "direct", "halving-doubling",
// "hierarchical" (ring inside each domain, ring across), "hierarchical-hd" (halving-doubling
// across). algorithm_choice.h picks one automatically; a user may name one.
//
// Contract: why_not() is empty exactly when schedule() can build the job; otherwise it is a
// one-line reason a user can act on. A schedule leaves every rank's buffer holding the op's
// result (collective_op.h), for any count the op accepts.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "trnsim/collectives/collective_op.h"
#include "trnsim/collectives/schedule.h"
#include "trnsim/fabric/fabric.h"

namespace trnsim::collectives {

struct CollectiveJob {
  Op op;
  int64_t count;                  // elements in each rank's buffer (size / element size)
  const fabric::Fabric* fabric;   // ranks, their placement, the ring order
  int ranks() const { return fabric->ranks(); }
};

class ICollectiveAlgorithm {
 public:
  virtual ~ICollectiveAlgorithm() = default;
  virtual std::string_view name() const = 0;
  virtual std::string why_not(const CollectiveJob& job) const = 0;
  virtual std::unique_ptr<ISchedule> schedule(const CollectiveJob& job) const = 0;
};

// The algorithm registered under `name`; UnsupportedError listing the names otherwise.
const ICollectiveAlgorithm& algorithm(std::string_view name);
std::vector<std::string> algorithm_names();  // registration order
void register_algorithm(std::unique_ptr<ICollectiveAlgorithm> a);

// Shared by implementations: all ranks as one group, in the fabric's ring order.
struct Group;
Group whole_group(const CollectiveJob& job);

}  // namespace trnsim::collectives
