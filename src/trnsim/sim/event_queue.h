// The discrete-event core: a binary heap of (time, sequence) ordered events. Events at the
// same time run in the order they were scheduled (the sequence number breaks ties), so a run
// is deterministic. An event is a target (a Handler) plus a 64-bit argument: no allocation
// per event, no std::function.
#pragma once
#include <cstdint>
#include <vector>

#include "trnsim/sim/time.h"

namespace trnsim::sim {

class Handler {
 public:
  virtual ~Handler() = default;
  virtual void on_event(Time now, uint64_t arg) = 0;
};

class EventQueue {
 public:
  void schedule(Time t, Handler* h, uint64_t arg = 0);  // t >= now()
  // Runs events in order until none is left; returns the time of the last one.
  Time run();
  // Runs one event; false when empty.
  bool step();
  Time now() const { return now_; }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  uint64_t events_processed() const { return processed_; }
  void reserve(size_t n) { heap_.reserve(n); }

 private:
  struct Event {
    int64_t t;
    uint64_t seq;
    Handler* h;
    uint64_t arg;
    bool operator<(const Event& o) const { return t != o.t ? t < o.t : seq < o.seq; }
  };
  std::vector<Event> heap_;  // min-heap on (t, seq)
  Time now_;
  uint64_t seq_ = 0;
  uint64_t processed_ = 0;
};

}  // namespace trnsim::sim
