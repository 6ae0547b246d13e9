// The time to bring a replica up: the weights from storage or host memory to HBM at a configured
// bandwidth, the compiled program loaded from the cache (or compiled), and warm-up iterations
// (a full prefill and a full decode each, timed by the step cost).
#pragma once
#include "trnsim/workloads/i_step_cost.h"
#include "trnsim/workloads/serve_cluster.h"
#include "trnsim/workloads/serve_options.h"

namespace trnsim::workloads {

ColdStartTime cold_start_time(const IStepCost& cost, const ColdStartOptions& c, const EngineOptions& e);

}  // namespace trnsim::workloads
