// An exclusive resource: one holder at a time (e.g. a memory port two engines share), granted
// first come, first served. A user asking at time t gets it from max(t, free_at()) and holds it
// until the end it reports (hold_until). It only remembers when the last grant ends, so users
// must ask in simulated-time order (core::Unit asks from an event at the request time, never
// ahead of the clock); equal request times are served in event order.
#pragma once
#include "trnsim/sim/time.h"

namespace trnsim::sim {

class ExclusiveResource {
 public:
  // When the current holder releases it (<= any time means free then).
  Time free_at() const { return free_at_; }
  bool free(Time t) const { return free_at_ <= t; }
  // Holds it until `end` (the caller checked free(start)).
  void hold_until(Time end) {
    if (free_at_ < end) free_at_ = end;
  }

 private:
  Time free_at_;
};

}  // namespace trnsim::sim
