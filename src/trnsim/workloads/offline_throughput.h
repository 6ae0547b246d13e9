// Offline (maximum-load) throughput of a deployment, as `trtllm-bench throughput` measures it:
// every request queued at once, fixed input/output lengths. The engine runs the largest batch
// that fits its KV memory and its per-iteration token budget; in steady state each iteration
// decodes that batch (at the mean context) while prefill of the requests that replace finished
// ones rides along (in/out prompt tokens per decoding sequence), so prefill is amortised.
// Works on any IStepCost (GPU baseline or Trainium).
#pragma once
#include <cstdint>

#include "trnsim/workloads/i_step_cost.h"

namespace trnsim::workloads {

struct OfflineOptions {
  int64_t input_tokens = 128;
  int64_t output_tokens = 128;
  int64_t max_batch = 2048;        // the engine's max_batch_size (TensorRT-LLM's default: 2048)
  int64_t max_num_tokens = 8192;   // tokens per iteration (TensorRT-LLM's default: 8192)
  double kv_memory_fraction = 0.9; // of the HBM left after weights (TensorRT-LLM: free_gpu_memory_fraction)
};

struct OfflineThroughput {
  int64_t batch = 0;               // sequences decoding in steady state
  const char* limit = "";          // what bounds it: "kv-memory", "max_batch" or "max_num_tokens"
  double prefill_tokens_per_step = 0;
  StepCost step;                   // one steady-state iteration
  double output_tokens_per_s = 0;  // of one replica
  double energy_per_output_token_j = 0;
};

// ShapeError when not even one sequence fits.
OfflineThroughput offline_throughput(const IStepCost& cost, const OfflineOptions& options);

}  // namespace trnsim::workloads
