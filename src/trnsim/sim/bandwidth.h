// Bandwidth resources shared by concurrent flows (processor sharing). A flow moves a number of
// bytes through one or more resources (a DMA engine group, the chip's HBM) at a rate capped by
// its own peak; rates are max-min fair (progressive filling): every resource's capacity is
// split evenly among the flows it carries, unless a flow is held lower by its cap or by
// another resource, in which case the rest goes to the others. Rates are recomputed whenever
// a flow starts or ends; the network schedules its own completion events on the EventQueue.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "trnsim/common/units.h"
#include "trnsim/sim/event_queue.h"

namespace trnsim::sim {

class BandwidthNetwork : public Handler {
 public:
  // Called when a flow has moved all its bytes (at `now`), with the flow's user tag.
  using OnDone = void (*)(void* ctx, Time now, uint64_t tag);

  BandwidthNetwork(EventQueue& q, OnDone on_done, void* ctx) : q_(q), on_done_(on_done), ctx_(ctx) {}

  int add_resource(std::string name, GBps capacity);
  // Starts a flow now. `resources` (up to 3) are indices from add_resource; cap is the flow's
  // own peak (GBps(0) = no cap). Returns a flow id.
  int start_flow(double bytes, std::initializer_list<int> resources, GBps cap, uint64_t tag);

  int active_flows() const { return active_; }
  double rate_of(int flow) const { return flows_[flow].rate; }  // bytes per ns, current
  double bytes_through(int resource) const { return res_[resource].bytes; }
  Time busy_time(int resource) const { return Time::ps(res_[resource].busy_ps); }
  const std::string& resource_name(int r) const { return res_[r].name; }
  int resources() const { return static_cast<int>(res_.size()); }

  void on_event(Time now, uint64_t arg) override;

 private:
  struct Resource {
    std::string name;
    double capacity;  // bytes per ns
    double bytes = 0;
    int64_t busy_ps = 0;
    int64_t busy_since = -1;
    int users = 0;
  };
  struct Flow {
    double remaining = 0;  // bytes
    double rate = 0;       // bytes per ns
    double cap = 0;        // 0 = none
    int res[3] = {-1, -1, -1};
    int nres = 0;
    uint64_t tag = 0;
    bool active = false;
  };
  void advance(Time now);   // move bytes of active flows up to now
  void reallocate(Time now);  // max-min fair rates; schedule the next completion

  EventQueue& q_;
  OnDone on_done_;
  void* ctx_;
  std::vector<Resource> res_;
  std::vector<Flow> flows_;
  std::vector<int> free_ids_;
  int active_ = 0;
  Time last_;
  uint64_t generation_ = 0;  // stale completion events carry an older generation
  // Scratch of reallocate/on_event, kept to avoid allocating per event.
  std::vector<double> left_;
  std::vector<int> unfrozen_users_, live_, done_;
  std::vector<char> frozen_;
  std::vector<uint64_t> tags_;
};

}  // namespace trnsim::sim
