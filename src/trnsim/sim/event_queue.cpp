#include "trnsim/sim/event_queue.h"

#include <algorithm>

#include "trnsim/common/error.h"

namespace trnsim::sim {

namespace {
// std::push_heap/pop_heap build a max-heap; invert the order for the earliest event on top.
struct Later {
  template <class E>
  bool operator()(const E& a, const E& b) const { return b < a; }
};
}  // namespace

void EventQueue::schedule(Time t, Handler* h, uint64_t arg) {
  if (t < now_) throw Error("EventQueue: an event was scheduled in the past");
  heap_.push_back(Event{t.ps(), seq_++, h, arg});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
}

bool EventQueue::step() {
  if (heap_.empty()) return false;
  std::pop_heap(heap_.begin(), heap_.end(), Later{});
  Event e = heap_.back();
  heap_.pop_back();
  now_ = Time::ps(e.t);
  ++processed_;
  e.h->on_event(now_, e.arg);
  return true;
}

Time EventQueue::run() {
  while (step()) {}
  return now_;
}

}  // namespace trnsim::sim
