// One optimizer step of a training job: every pipeline rank runs its forward and backward passes
// of the step's micro-batches in schedule order (pipeline_schedule.h), with tensor-parallel
// collectives inside each pass (from the step-cost model), expert all-to-alls, context-parallel
// K/V exchange and ZeRO-3 gathers where they cannot hide behind compute; then the data-parallel
// gradient reduction (overlapped with the last backward), the optimizer and ZeRO's parameter
// gather. The breakdown (compute, exposed communication, bubble, optimizer) sums to the step.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "trnsim/hw/chip_spec.h"
#include "trnsim/workloads/train_comm.h"
#include "trnsim/workloads/train_layer_cost.h"
#include "trnsim/workloads/pipeline_schedule.h"
#include "trnsim/workloads/train_memory.h"

namespace trnsim::workloads {

struct TrainConditions {
  double efa_oversubscription = 1.0;  // a node's EFA bandwidth / this (fat-tree taper)
  double degraded_link = 1.0;         // the slowest node's EFA runs at this fraction
  double straggler_slowdown = 1.0;    // the slowest chip's compute takes this many times longer
};

struct TrainStep {
  TrainLayout layout;
  double step_ns = 0;
  // Breakdown of step_ns (sums to it).
  double compute_ns = 0, exposed_comm_ns = 0, bubble_ns = 0, optimizer_ns = 0;
  // Per micro-batch on the busiest pipeline rank.
  double forward_ns = 0, backward_ns = 0, recompute_ns = 0;
  // Communication: time of each kind per step (exposed or not) and the exposed share.
  double tp_comm_ns = 0, pp_send_ns = 0, ep_comm_ns = 0, cp_comm_ns = 0;
  double dp_comm_ns = 0, dp_exposed_ns = 0, zero_gather_ns = 0;
  double dp_bytes_per_rank = 0;       // gradient reduction + ZeRO gathers, per step
  double dp_param_elements_per_rank = 0;  // the same in parameter elements (ZeRO test)
  double bubble_fraction = 0;
  double model_flops = 0;             // per step: (6N + attention) x tokens
  double mfu = 0;                     // model FLOPs / (step x chips x dense peak)
  double params_total = 0;
  MemoryUse memory;
  std::string fabric;
  // Added by energy: the step's energy on all chips by unit (the passes' measured dynamic
  // energy, data- and pipeline-parallel traffic per byte, the optimizer's HBM and VectorE work,
  // static power over the step), and the power of every chip in the busiest pass at once.
  UnitEnergy energy;
  double peak_power_w = 0;
  // Added by power2: the expert-parallel all-to-all and context-parallel ring traffic in
  // `energy` (HBM at both ends, NeuronLink or EFA per byte), and its bytes, all ranks per step.
  UnitEnergy ep_energy, cp_energy;
  double ep_bytes = 0, cp_bytes = 0;
};

// A communication of `comm` ns that can run under `window` ns of compute, issued layer by layer:
// the last layer's share has nothing left to hide behind.
double exposed_comm_ns(double comm, double window, int64_t layers);
// Layers of pipeline stage r of pp (the first stages take the remainder), and its MoE layers.
int64_t stage_layer_count(const ModelDesc& m, int pp, int r);
int64_t stage_moe_layer_count(const ModelDesc& m, int pp, int r);

// Each pipeline rank's pass times per micro-batch (and their collective share), and what the
// step adds after the pipeline: the exposed data-parallel reduction, ZeRO's gather, the optimizer.
struct StageTimes {
  std::vector<double> fwd, bwd, comm_fwd, comm_bwd;
  double dp_exposed_ns = 0, gather_ns = 0, optimizer_ns = 0;
};
// The step's time breakdown, busiest-rank figures and MFU from the pipeline's timing, shared by
// the Trainium and GPU steps; `peak_flops` is one chip's dense peak (FLOP/s).
void fill_step_times(TrainStep& out, const TrainConfig& c, const ModelDesc& model, const PipelineTiming& pt,
                     const StageTimes& s, int virtual_stages, double p2p_ns, double peak_flops);

TrainStep train_step(const ModelDesc& model, const TrainConfig& c, const hw::SystemSpec& system,
                     const StepCostFactory& factory, const TrainConditions& conditions = {});

}  // namespace trnsim::workloads
