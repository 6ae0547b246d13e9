// `trnsim serve` end to end: the model and its step cost on the deployment, the KV cache sized
// from HBM, the cold start, the KV-transfer path of the fabric, the simulation, and the result
// (serve_report.h) with the time series.
#pragma once
#include <nlohmann/json.hpp>

#include "trnsim/workloads/serve_cluster.h"
#include "trnsim/workloads/serve_spec.h"

namespace trnsim::workloads {

struct ServeRunResult {
  nlohmann::json result;  // kind "serve"
  Timeline timeline;
};

ServeRunResult run_serve(ServeSpec spec, const ServeProgress& progress = {});

// The run's checks that need no model: option combinations (one-line ConfigError or
// UnsupportedError naming the options).
void validate_serve_options(const ServeOptions& o);

}  // namespace trnsim::workloads
