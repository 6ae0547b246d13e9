// The requests of a run, from the traffic options: open loop (an arrival process or a trace,
// all generated up front in arrival order), offline (all at time 0) or closed loop (fixed
// concurrency: the next request is drawn when a client's previous one ends). Lengths past the
// model's context are a ConfigError naming the trace row or the option.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "trnsim/workloads/serve_options.h"
#include "trnsim/workloads/serve_request.h"
#include "trnsim/workloads/traffic_trace.h"

namespace trnsim::workloads {

class RequestSource {
 public:
  RequestSource(const TrafficOptions& opt, int64_t max_context);
  bool closed_loop() const { return opt_.concurrency > 0; }
  // Open loop and offline: every request, in arrival order.
  std::vector<Request> all();
  // Closed loop: the next request sent at `now`; false when the run has sent enough.
  bool next(double now, int64_t sent, Request& out);

 private:
  Request draw(double arrival);
  void check(const Request& r, int64_t row) const;

  TrafficOptions opt_;
  int64_t max_context_;
  std::mt19937_64 rng_;
  std::vector<TraceRow> trace_;
};

}  // namespace trnsim::workloads
