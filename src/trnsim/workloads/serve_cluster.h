// The discrete-event simulation of a serving deployment: requests arrive (open loop, offline or
// closed loop), a router sends each to a replica, replicas run iterations whose times come from
// the step cost, a disaggregated prefill replica ships the KV cache to a decode replica over the
// fabric, the autoscaler adds and drains replicas (each new one pays a cold start), and failures
// take replicas down (their requests are retried elsewhere) or slow their links. Events at equal
// times are handled in the order they were scheduled, so a run is bit-identical for a seed.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "trnsim/workloads/i_step_cost.h"
#include "trnsim/workloads/serve_options.h"
#include "trnsim/workloads/serve_recorder.h"

namespace trnsim::workloads {

struct ColdStartTime {
  double weights_s = 0, program_s = 0, warmup_s = 0;
  double total_s() const { return weights_s + program_s + warmup_s; }
};

// What the simulation needs besides the options: the costs and the sizes derived from them.
struct ServeSetup {
  const IStepCost* cost = nullptr;
  int64_t kv_blocks = 0;  // per replica
  int64_t max_context = 0;
  ColdStartTime cold;
  double kv_transfer_gbps = 0, kv_transfer_latency_s = 0;
};

struct Incident {
  std::string what;
  int replica = 0;
  double at_s = 0, back_s = -1;  // back: up again (lost) or bandwidth restored (link); -1 never
  int64_t retried = 0;           // requests re-queued
  double fraction = 1;           // link: bandwidth left
};

struct ServeOutcome {
  explicit ServeOutcome(double bin_s) : rec(bin_s) {}
  ServeRecorder rec;
  std::vector<Incident> incidents;
  double end_s = 0;              // last completion
  int replicas_peak = 0, scale_ups = 0, scale_downs = 0;
  double replica_seconds = 0;    // replica time held (up, cold, draining), for cost per token
  double busy_seconds = 0;       // replica time spent in iterations
};

// progress(simulated seconds, completed, total or -1) every ~64k events.
using ServeProgress = std::function<void(double, int64_t, int64_t)>;

ServeOutcome simulate_serving(const ServeOptions& opt, const ServeSetup& setup, const ServeProgress& progress = {});

}  // namespace trnsim::workloads
