// What a training job is: the model, the system and node count, the parallel layout, the batch
// and the numerics. TrainConfig is what users give (CLI, Python); TrainLayout is what follows
// from it on a system (ranks, micro-batches per step), checked once with one-line errors.
#pragma once
#include <cstdint>
#include <string>

#include "trnsim/hw/chip_spec.h"

namespace trnsim::workloads {

enum class Recompute { None, Selective, Full };
enum class PipelineSchedule { GPipe, OneFOneB, Interleaved };
// bf16 compute with fp32 master weights and fp32 gradients (Megatron's default), or bf16
// weights updated with stochastic rounding (Neuron's BF16+SR: no master copy).
enum class Precision { MasterFp32, StochasticRounding };
enum class OptimizerKind { AdamW, Lamb };

struct TrainConfig {
  std::string system = "trn1.32xlarge";
  int nodes = 1;                 // instances (or UltraServers) of `system` joined by EFA
  int tp = 1, pp = 1, dp = 0, ep = 1, cp = 1;  // dp = 0: what the other degrees leave
  int zero = 0;                  // ZeRO stage 0..3 over the data-parallel group
  bool sequence_parallel = true; // Megatron sequence parallelism with tp > 1
  PipelineSchedule schedule = PipelineSchedule::OneFOneB;
  int virtual_stages = 1;        // interleaved 1F1B: model chunks per pipeline rank
  int64_t micro_batch = 1;       // sequences per micro-batch per data-parallel rank
  int64_t global_batch = 0;      // sequences per optimizer step
  int64_t seq = 0;               // tokens per sequence
  Recompute recompute = Recompute::None;
  std::string dtype = "bf16";    // matmul dtype: bf16 | fp8
  Precision precision = Precision::MasterFp32;
  OptimizerKind optimizer = OptimizerKind::AdamW;
  int lnc = 0;                   // logical NeuronCore size (0: the chip's default)
  // Where the forward's compute times come from: "kernel" (the kernel library's matmul,
  // attention, norm and activation kernels, train_kernel_cost.h) or "step-cost" (the shared
  // step-cost model's, as for inference). TP collectives are the step-cost model's either way.
  std::string compute_cost = "kernel";
  double clock_scale = 1.0;      // added by energy: DVFS point of the engine clocks (hw::at_clock_scale)
};

// The job on its system: ranks are logical NeuronCores, placed tp fastest, then cp, dp, pp
// (Megatron's order), so a tensor-parallel group stays inside an instance.
struct TrainLayout {
  int cores_per_chip = 1;        // logical NeuronCores per chip
  int cores_per_node = 1;        // logical NeuronCores per instance
  int chips = 1, ranks = 1;
  int tp = 1, pp = 1, dp = 1, ep = 1, cp = 1;
  int64_t micro_batches = 1;     // per data-parallel rank per step (gradient accumulation)
};

Recompute parse_recompute(const std::string& s);
PipelineSchedule parse_schedule(const std::string& s);
Precision parse_precision(const std::string& s);
OptimizerKind parse_optimizer(const std::string& s);
const char* name(Recompute r);
const char* name(PipelineSchedule s);
const char* name(Precision p);
const char* name(OptimizerKind o);

// Logical NeuronCores per chip: the chip's cores / lnc (lnc 0: 2 on chips of 8 cores, else 1).
int logical_cores_per_chip(const hw::ChipSpec& chip, int lnc);

// Checks the config against the system (degrees multiply to the ranks, the batch splits into
// micro-batches, ...); ConfigError naming the option otherwise.
TrainLayout make_layout(const TrainConfig& c, const hw::SystemSpec& system);
// The same for `chips_per_node` chips of `cores_per_chip` ranks each (a GPU system: GPUs, 1 rank
// each); `unit` names the ranks in errors ("NeuronCores", "GPUs").
TrainLayout make_layout(const TrainConfig& c, int cores_per_chip, int chips_per_node, const std::string& system,
                        const char* unit);

}  // namespace trnsim::workloads
