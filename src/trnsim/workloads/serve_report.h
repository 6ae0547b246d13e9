// The result of a serving run as JSON (kind "serve"), with the metrics of vLLM's `bench serve`
// and MLPerf: TTFT, TPOT, ITL, end-to-end latency and queueing delay (mean, p50, p90, p95, p99,
// max; percentiles interpolated as numpy's default), request and token throughput (overall,
// steady state and during bursts), goodput under the SLO, KV-cache use and preemptions, cold
// start, incidents, energy and the Little's-law check; and the per-bin time series.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "trnsim/workloads/serve_cluster.h"
#include "trnsim/workloads/serve_energy_report.h"
#include "trnsim/workloads/serve_memory.h"
#include "trnsim/workloads/serve_options.h"

namespace trnsim::workloads {

// What the result records about the deployment besides the run's outcome.
struct ServeContext {
  std::string model, system, dtype, weights;
  int tp = 1, pp = 1, chips_per_replica = 1, cores_per_replica = 1;
  double clock_scale = 1;  // DVFS point of the engine clocks (Deployment::clock_scale)
  KvCacheSize kv;
  ColdStartTime cold;
  double kv_transfer_gbps = 0;
  std::string traffic;  // a readable description of the traffic
  ServeEnergyContext energy;  // added by energy
};

nlohmann::json serve_result_json(const ServeOutcome& out, const ServeOptions& opt, const ServeContext& ctx);
nlohmann::json timeline_json(const Timeline& t);
// `.json`: a list of objects; anything else: CSV with a header.
void write_timeline(const std::string& path, const Timeline& t);

// Percentile of sorted values, linear interpolation between order statistics (numpy default).
double percentile_sorted(const std::vector<double>& sorted, double q);

}  // namespace trnsim::workloads
