// The hardware semaphores of a program: counters that instructions increment on completion
// and wait on (>= value) before issuing. An increment becomes visible `latency` after the
// signalling instruction completes (the cross-engine semaphore hop).
#pragma once
#include <cstdint>
#include <vector>

#include "trnsim/common/limits.h"
#include "trnsim/sim/event_queue.h"

namespace trnsim::core {

class Unit;

class Semaphores : public sim::Handler {
 public:
  Semaphores(sim::EventQueue& q, uint32_t count) : q_(q), value_(bounded(count), 0), waiters_(count) {}
  uint32_t value(uint32_t s) const { return value_[s]; }
  bool met(uint32_t s, uint32_t v) const { return value_[s] >= v; }
  void add_waiter(uint32_t s, Unit* u) { waiters_[s].push_back(u); }
  void signal_at(sim::Time t, uint32_t s) { q_.schedule(t, this, s); }
  void on_event(sim::Time now, uint64_t s) override;

 private:
  // A loaded program's count is untrusted (a forged .tpg asked for 2^28: 8 GB of waiter lists):
  // checked against the memory limit before anything is allocated.
  static uint32_t bounded(uint32_t count) {
    check_memory(static_cast<double>(count) * (sizeof(uint32_t) + sizeof(std::vector<Unit*>)),
                 fmt::format("a program with {} semaphores", count));
    return count;
  }

  sim::EventQueue& q_;
  std::vector<uint32_t> value_;
  std::vector<std::vector<Unit*>> waiters_;
  std::vector<Unit*> scratch_;
};

}  // namespace trnsim::core
