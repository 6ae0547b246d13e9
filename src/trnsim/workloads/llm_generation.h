// A whole generation of `trnsim llm` (Trainium or GPU systems): a batch of B prompts of I tokens prefilled in one step
// (TTFT), then O - 1 decode steps as the context grows (TPOT: their mean), on a deployment,
// with the memory per core checked (weights + KV cache + activations) and the breakdown of a
// decode step. JSON (kind "llm") is what the CLI prints and trnsim.llm() returns.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnsim/workloads/llm_cost.h"

namespace trnsim::workloads {

enum class KvBuckets : uint8_t { Compiled, Pow2, Exact };

struct GenerationRequest {
  int64_t batch = 1, input = 128, output = 128;
  int64_t micro_batches = 0;  // pp > 1: micro-batches in flight (0: min(batch, pp))
  // What attention reads. transformers-neuronx and NxD Inference compile the model for fixed
  // lengths: the prefill and each decode step attend over their whole bucket of the KV cache
  // (masked positions are read and computed like real ones). Compiled: one bucket of seq_len
  // tokens; Pow2: buckets of 128, 256, ... up to seq_len; Exact: the sequence's own tokens (a
  // ragged or paged kernel). seq_len 0: input + output.
  KvBuckets kv_buckets = KvBuckets::Compiled;
  int64_t seq_len = 0;
};

// Keys a decode step attends over for a sequence with `context` tokens cached before it.
int64_t decode_keys(KvBuckets b, int64_t context, int64_t seq_len);
// The bucket (keys attended) of a step that holds `keys` tokens of the sequence.
int64_t bucket_keys(KvBuckets b, int64_t keys, int64_t seq_len);
KvBuckets parse_kv_buckets(const std::string& name);  // compiled | pow2 | exact; else ConfigError
const char* kv_buckets_name(KvBuckets b);

struct GenerationResult {
  double ttft_s = 0, tpot_s = 0, e2e_s = 0, output_tokens_per_s = 0;
  double weight_bytes_per_core = 0, kv_bytes_per_core = 0, activation_bytes_per_core = 0, hbm_bytes_per_core = 0;
  StepCost prefill, decode_mean;                  // decode_mean: breakdown averaged over the steps
  std::vector<CostNode> prefill_nodes, decode_nodes;  // the first decode step's nodes
  int decode_steps_evaluated = 0;
  int64_t micro_batches = 1;
  // Added by energy: the generation's energy (prefill + every decode step), by unit; the
  // highest power of any step (a step's energy over its time), all chips of the replica.
  UnitEnergy energy;
  double peak_power_w = 0;
  int simulations = 0;                            // timing-mode runs this generation needed
  double simulation_wall_s = 0;
};

// On the Trainium step-cost model (TrainiumStepCost) or the GPU baseline (GpuStepCost: one
// GPU is a "core", pp 1, no per-node breakdown). Throws ShapeError when weights + KV cache +
// activations exceed a core's (a GPU's) HBM.
GenerationResult simulate_generation(const IStepCost& cost, const GenerationRequest& request);

nlohmann::json generation_json(const IStepCost& cost, const Deployment& d, const GenerationRequest& r,
                               const GenerationResult& g);

// Chrome trace (chrome://tracing, Perfetto) of the prefill step and the first decode step: one
// event per node of every layer on a rank, back to back.
nlohmann::json generation_trace(const GenerationResult& g);

}  // namespace trnsim::workloads
