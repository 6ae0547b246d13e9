// One `trnsim llm` run as the CLI and Python ask for it: the generation on a Trainium system
// (TrainiumStepCost) or a GPU system (the GPU baseline, GpuStepCost),
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
  std::unique_ptr<IStepCost> cost;  // TrainiumStepCost or GpuStepCost
  GenerationResult result;
  std::optional<WorkloadThrottle> throttle;

  nlohmann::json json() const;   // generation_json + "power_cap"
  nlohmann::json trace() const;  // generation_trace + the power counter (W, all chips and per chip)
};

// On a GPU system the options that only mean something on Trainium are one-line errors: --lnc,
// --pp/--ep (the GPU baseline is tensor parallel), --sequence-parallel, --micro-batches.
LlmRun run_llm(const std::string& model, Deployment d, const GenerationRequest& r, const PowerCap& cap = {});

// The --kv-buckets of `system` when none is given (""): compiled on Trainium (the Neuron SDK
// compiles fixed-length buckets), exact on GPUs (TensorRT-LLM's and vLLM's paged KV cache).
KvBuckets default_kv_buckets(const std::string& system, const std::string& given);

}  // namespace trnsim::workloads
