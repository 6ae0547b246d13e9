// Where replicas write what happens to requests: the per-request timestamps, the inter-token
// latencies, the counters and the time series. One recorder per run, shared by all replicas.
#pragma once
#include <cstdint>
#include <vector>

#include "trnsim/workloads/serve_histogram.h"
#include "trnsim/workloads/unit_energy.h"
#include "trnsim/workloads/serve_request.h"
#include "trnsim/workloads/serve_timeline.h"

namespace trnsim::workloads {

struct ServeRecorder {
  explicit ServeRecorder(double bin_s) : timeline(bin_s) {}
  std::vector<Request> requests;
  std::vector<RequestRecord> records;
  LogHistogram itl;
  Timeline timeline;
  int64_t preemptions = 0, swaps = 0, retries = 0, completed = 0, iterations = 0;
  int64_t prefix_hit_tokens = 0;
  double energy_j = 0;            // of the run: energy_by_unit's total (set at the end)
  UnitEnergy energy_by_unit;      // the iterations' dynamic energy; static added at the end
  double peak_iteration_power_w = 0;  // the highest power of one replica's iteration
  double in_system_integral = 0;  // integral over time of requests in the system (Little's law)
};

}  // namespace trnsim::workloads
