// How a model is sharded over a deployment's ranks, as Neuron (NxD / transformers-neuronx)
// lays LLMs out: Megatron column/row splits of attention and FFN over the TP ranks (logical
// NeuronCores), KV heads split when TP divides them, replicated (one per rank) when they
// divide TP, otherwise one per padded query head (NxD's GQA-to-MHA conversion),
// layers split over PP stages, MoE experts over EP groups (each expert sharded over tp / ep
// ranks), the vocabulary split for the LM head. Shapes per rank and bytes per core.
#pragma once
#include <cstdint>
#include <string>

#include "trnsim/hw/chip_spec.h"
#include "trnsim/hw/logical_cores.h"
#include "trnsim/workloads/i_step_cost.h"

namespace trnsim::workloads {

struct Layout {
  int tp = 1, pp = 1, ep = 1, lnc = 1;
  int lcores_per_chip = 1;    // logical cores of one chip
  int64_t q_heads = 0;        // query heads per rank (padded up when TP does not divide)
  int64_t kv_heads = 0;       // KV heads per rank (replicated: 1 when they divide tp)
  int64_t ffn = 0;            // dense FFN width per rank
  int64_t experts = 0;        // routed experts per rank (E / ep)
  int64_t expert_ffn = 0;     // one expert's FFN width per rank (Ie / (tp / ep))
  int64_t shared_ffn = 0;     // shared experts' FFN width per rank
  int64_t vocab = 0;          // LM-head columns per rank
  int64_t layers_per_stage = 0;
  int weight_bytes = 2, kv_bytes = 2;
  int chips = 1;              // chips of one replica

  // Weights of one layer on one rank (elements), KV-cache elements of one token of one layer.
  int64_t layer_weights(const ModelDesc& m, int64_t layer) const;
  int64_t layer_kv(const ModelDesc& m) const;
};

int dtype_bytes(const std::string& dtype, const std::string& field);  // bf16 2, fp8/int8 1

// Checks the degrees against the model and the system; ConfigError/ShapeError naming them.
Layout make_layout(const ModelDesc& m, const Deployment& d, const hw::SystemSpec& system);

// Default logical-core size: 2 on chips of 8 NeuronCores (Trn2, Trn3), else 1 (the one rule, hw/).
using hw::default_lnc;

}  // namespace trnsim::workloads
