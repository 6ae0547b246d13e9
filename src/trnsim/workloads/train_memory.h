// Memory of one NeuronCore in a training job: weights, gradients, optimizer state (ZeRO shards
// them over the data-parallel group) and the activations the pipeline schedule keeps in flight,
// against the core's share of HBM. A layout that does not fit is a ShapeError saying by how
// much and what would help.
#pragma once
#include <cstdint>
#include <string>

#include "trnsim/workloads/model_desc.h"
#include "trnsim/workloads/train_config.h"

namespace trnsim::workloads {

// Parameters one rank holds before ZeRO: its pipeline stage's layers, tensor-sharded, experts
// split over expert-parallel ranks; the first stage holds the embedding, the last the head.
struct RankParams {
  double dense = 0;    // reduced over the dp x cp group
  double expert = 0;   // reduced over the dp x cp / ep group
  double total() const { return dense + expert; }
};
RankParams rank_params(const ModelDesc& m, const TrainConfig& c, int stage);

struct MemoryUse {  // bytes per NeuronCore, for the fullest pipeline stage
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, capacity = 0;
  int stage = 0;
  double total() const { return weights + gradients + optimizer + activations; }
};

// Bytes per parameter of each state for the precision (weights bf16 or fp8; gradients fp32 with
// fp32 master weights, bf16 with stochastic rounding; AdamW/Lamb keep two fp32 moments plus the
// fp32 master copy when there is one).
double weight_bytes_per_param(const TrainConfig& c);
double grad_bytes_per_param(const TrainConfig& c);
double optimizer_bytes_per_param(const TrainConfig& c);

// in_flight[stage]: micro-batch chunks a stage holds at once (from the pipeline schedule).
MemoryUse memory_per_core(const ModelDesc& m, const TrainConfig& c, const TrainLayout& l,
                          const std::vector<int64_t>& in_flight, double hbm_bytes_per_core);

// ShapeError when `u` does not fit, naming the parts, the excess and remedies (per `unit`: a
// NeuronCore, a GPU).
void check_fits(const MemoryUse& u, const TrainConfig& c, const std::string& model_name,
                const char* unit = "NeuronCore");

}  // namespace trnsim::workloads
