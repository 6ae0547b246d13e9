// A flow-level network: each transfer is a flow of bytes through a list of resources (links,
// DMA paths) that share their capacity max-min fairly among the flows crossing them (max_min.h).
// Event-driven: rates are re-solved only when a flow starts or drains, and time jumps from one
// such event to the next, so the cost is O(events x active flows), independent of the bytes.
// Time is integer picoseconds (sim::Time): flows in symmetric positions drain at the same tick
// and are handled as one event. A flow is delivered `latency` after its last byte left (the
// path's propagation and switching delay); it stops holding bandwidth once drained.
#pragma once
#include <cstdint>
#include <queue>
#include <span>
#include <vector>

#include "trnsim/common/units.h"
#include "trnsim/fabric/max_min.h"
#include "trnsim/sim/time.h"

namespace trnsim::fabric {

struct Delivery {
  uint64_t tag;
  sim::Time at;
};

class FlowNetwork {
 public:
  int add_resource(GBps capacity);
  int resources() const { return static_cast<int>(capacity_.size()); }

  // A flow of `bytes` through `path` starting at `at` (>= now()); delivered at drain + latency.
  void start(sim::Time at, std::span<const int> path, double bytes, sim::Time latency, uint64_t tag);
  // Advances to the next time at which flows are delivered and appends them all; false (and no
  // change) when nothing is in flight.
  bool advance(std::vector<Delivery>& out);
  sim::Time now() const { return now_; }
  bool idle() const { return active_.empty() && pending_.empty() && deliveries_.empty(); }
  // Forgets every flow and returns to time 0; resources stay.
  void reset();

  // Current rate of the i-th active flow in start order (GB/s), for tests and reports.
  double active_rate(size_t i) const { return flows_[active_[i]].rate; }
  size_t active_flows() const { return active_.size(); }
  uint64_t solves() const { return solves_; }

 private:
  struct Flow {
    double remaining;   // bytes
    double rate = 0;    // bytes per ns (GB/s)
    int64_t finish = 0; // ps at which it drains at the current rate
    int64_t latency;    // ps
    int64_t path_begin, path_end;
    uint64_t tag;
  };
  struct Timed {
    int64_t t;
    uint64_t seq;
    uint64_t id;  // flow index (pending) or tag (deliveries)
    bool operator>(const Timed& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  using MinHeap = std::priority_queue<Timed, std::vector<Timed>, std::greater<>>;

  void resolve();  // re-solve rates of the active flows and their drain ticks

  std::vector<double> capacity_;  // bytes per ns
  std::vector<Flow> flows_;
  std::vector<int> path_pool_;
  std::vector<int> active_;  // flow indices, in start order
  MinHeap pending_, deliveries_;
  sim::Time now_;
  uint64_t seq_ = 0;
  bool dirty_ = false;
  uint64_t solves_ = 0;
  MaxMinSolver solver_;
  std::vector<int64_t> offset_;
  std::vector<int> path_;
  std::vector<double> rate_;
};

}  // namespace trnsim::fabric
