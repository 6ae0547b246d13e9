// What training needs to know about a model beyond a forward pass: its weights split by where
// they live (replicated, tensor-sharded, expert-sharded), the model FLOPs of a token (6N plus
// attention, the usual MFU count) and the activation bytes a layer keeps for its backward.
// Counted from the ModelDesc hyper-parameters alone (no weights, no graph).
#pragma once
#include <cstdint>

#include "trnsim/workloads/model_desc.h"
#include "trnsim/workloads/train_config.h"

namespace trnsim::workloads {

struct LayerParams {
  double attention = 0;     // q, k, v, o (or MLA's projections)
  double dense_ffn = 0;     // a dense FFN
  double experts = 0;       // routed experts of a MoE layer (all of them)
  double expert_active = 0; // the top-k experts a token goes through
  double shared_experts = 0;  // always-on experts and the router
  double norms = 0;
};

struct ModelStats {
  LayerParams layer;
  int64_t moe_layers = 0, dense_layers = 0;
  double embedding = 0;     // token (and learned position) embeddings
  double head = 0;          // LM head; 0 when tied to the embedding
  double total = 0;         // every weight
  double active = 0;        // weights a token goes through (top-k experts)
  double non_embedding_active = 0;  // N of the 6N count (the head included, as PaLM counts it)
};

ModelStats model_stats(const ModelDesc& m);

// Model FLOPs of one trained token (forward + backward): 6 N + 12 L h_q S (PaLM, appendix B;
// the attention term counts QK^T and AV without the causal halving, as MFU reports do).
double train_flops_per_token(const ModelDesc& m, int64_t seq);

// Bytes of activations one layer keeps per token for its backward, on one tensor-parallel rank
// with sequence parallelism (everything / tp), for the recompute policy. Flash-style attention:
// no score matrix is stored. dtype_bytes: 2 for bf16 activations.
double activation_bytes_per_token_per_layer(const ModelDesc& m, Recompute r, int tp, double dtype_bytes);

}  // namespace trnsim::workloads
