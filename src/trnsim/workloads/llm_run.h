// One `trnsim llm` run as the CLI and Python ask for it: the generation on a Trainium system,
// under a power cap when one is given (the clock found by workload_power_cap.h), its JSON and
// its Chrome trace (the prefill and first decode step's nodes, and a power counter track over
// the whole generation).
#pragma once
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "trnsim/workloads/llm_generation.h"
#include "trnsim/workloads/workload_power_cap.h"

namespace trnsim::workloads {

struct LlmRun {
  Deployment deployment;  // at the clock it ran (the cap's, if any)
  GenerationRequest request;
  std::unique_ptr<TrainiumStepCost> cost;
  GenerationResult result;
  std::optional<WorkloadThrottle> throttle;

  nlohmann::json json() const;   // generation_json + "power_cap"
  nlohmann::json trace() const;  // generation_trace + the power counter (W, all chips and per chip)
};

LlmRun run_llm(const std::string& model, Deployment d, const GenerationRequest& r, const PowerCap& cap = {});

}  // namespace trnsim::workloads
