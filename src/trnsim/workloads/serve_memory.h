// The KV-cache size of a replica, as vLLM sizes it: HBM x utilisation, minus the weights, minus
// the activations of the largest iteration, divided into blocks. A deployment whose weights
// and activations leave no room is a ShapeError naming the figures.
#pragma once
#include <cstdint>

#include "trnsim/workloads/i_step_cost.h"
#include "trnsim/workloads/model_desc.h"
#include "trnsim/workloads/serve_options.h"

namespace trnsim::workloads {

struct KvCacheSize {
  int64_t blocks = 0;
  double hbm_bytes = 0, weight_bytes = 0, activation_bytes = 0, kv_bytes = 0;  // per core
};

// Peak activation bytes per core of an iteration of `max_batched_tokens` tokens (hidden states,
// QKV, the FFN's widest intermediate, logits of max_seqs rows), split over `tp` ranks.
double activation_bytes_estimate(const ModelDesc& m, int tp, int64_t max_batched_tokens, int max_seqs);

KvCacheSize size_kv_cache(const IStepCost& cost, const EngineOptions& e, double activation_bytes_per_core);

}  // namespace trnsim::workloads
