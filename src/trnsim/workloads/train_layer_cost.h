// The forward cost of one transformer layer and of the model's ends (embedding, LM head, fixed
// per-iteration costs) for one micro-batch, from the shared step-cost interface: the cost of
// a 2-layer model minus that of a 1-layer one is a layer; what remains of the 1-layer model is
// the ends. A training forward of m sequences of S tokens is a StepBatch of m prefill chunks
// {S, 0} (with context parallelism, S/cp tokens after an average causal context).
// The backward follows from the forward's breakdown (train_layer_cost.cpp says how).
#pragma once
#include <array>
#include <functional>
#include <memory>

#include "trnsim/hw/chip_spec.h"
#include "trnsim/workloads/i_step_cost.h"
#include "trnsim/workloads/model_desc.h"
#include "trnsim/workloads/train_config.h"

namespace trnsim::workloads {

using StepCostFactory = std::function<std::unique_ptr<IStepCost>(const ModelDesc&, const Deployment&)>;

struct PassCost {  // nanoseconds
  double matmul = 0, attention = 0, collective = 0, other = 0;
  double total() const { return matmul + attention + collective + other; }
  // Added by energy: dynamic energy of the pass on one tensor-parallel group, by category
  // (matmul, attention, collective, other), so that the backward scales each as its time.
  std::array<UnitEnergy, 4> energy{};
  UnitEnergy total_energy() const { return energy[0] + energy[1] + energy[2] + energy[3]; }
};
PassCost operator+(PassCost a, const PassCost& b);
PassCost operator*(PassCost a, double k);

struct LayerCosts {
  PassCost dense_layer;  // forward of one layer with a dense FFN
  PassCost moe_layer;    // forward of one MoE layer (== dense_layer for a dense model)
  PassCost ends;         // embedding + LM head + per-iteration fixed costs (the last stage)
};

// Forward costs of one micro-batch of `micro_batch` sequences on one tensor-parallel group.
// With c.compute_cost == "kernel" matmuls, attention and elementwise work are re-timed on the
// kernel library (train_kernel_cost.h), the LM head and loss over every token; `chip` and the
// logical-core size say where.
LayerCosts layer_costs(const ModelDesc& model, const TrainConfig& c, const StepCostFactory& factory,
                       const hw::ChipSpec& chip, int cores_per_chip);

// Backward of a forward pass: matmuls x2 (input and weight gradients), attention x2.5
// (flash-attention backward recomputes QK^T and softmax and runs dV, dP, dQ, dK: 5 matmuls for
// the forward's 2), elementwise x1.5 (reads the saved input and the incoming gradient, writes
// one gradient: 3 tensors for the forward's 2), tensor-parallel collectives x1 (the same
// all-gather / reduce-scatter pairs in reverse).
PassCost backward_of(const PassCost& forward);
// What recomputation adds before a backward: none; the attention core (selective); the whole
// forward (full).
PassCost recompute_of(const PassCost& forward, Recompute r);

}  // namespace trnsim::workloads
