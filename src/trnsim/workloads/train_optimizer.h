// The optimizer step on one NeuronCore: AdamW or Lamb over the parameters it owns (its ZeRO
// shard), bound by the HBM traffic of the fp32 state or by VectorE's elementwise rate,
// whichever is slower; plus the gradient-norm pass for clipping.
#pragma once
#include "trnsim/hw/chip_spec.h"
#include "trnsim/workloads/train_config.h"

namespace trnsim::workloads {

struct OptimizerCost {
  double hbm_bytes_per_param = 0;
  double vector_ops_per_param = 0;
  double time_ns = 0;
};

// HBM bytes the optimizer moves per parameter it owns (gradients, moments, master copy, weights).
double optimizer_hbm_bytes_per_param(const TrainConfig& c);

OptimizerCost optimizer_cost(const TrainConfig& c, const hw::ChipSpec& chip, int cores_per_chip, double params);

// HBM bandwidth (bytes/ns) of one logical NeuronCore: the chip's / its logical cores.
double hbm_gbps_per_core(const hw::ChipSpec& chip, int cores_per_chip);

}  // namespace trnsim::workloads
