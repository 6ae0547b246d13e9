// One optimizer step of a training job on a GPU system (configs/gpus), from the GPU baseline's
// per-op roofline (gpu_step_cost.h): each layer's forward is the step cost of a prefill of the
// micro-batch's tokens (GEMMs at the GEMM efficiency curve, attention, memory-bound ops, the
// tensor-parallel all-reduces over NVLink), the LM head over every token; the backward, the
// recomputation and the pipeline schedule as on Trainium (train_layer_cost.h,
// pipeline_schedule.h); data-parallel gradient reduction and ZeRO gathers as hierarchical rings
// (NVLink inside a system, its EFA share per GPU across systems); the optimizer bound by HBM.
// Tensor, pipeline and data parallel; expert and context parallelism are not modelled on GPUs.
#pragma once
#include "trnsim/hw/gpu_spec.h"
#include "trnsim/workloads/train_step.h"

namespace trnsim::workloads {

// `system` at the SM clock the job runs (gpu_at_clock_scale); a "node" is one GPU system (an
// instance, or a rack such as GB300 NVL72). UnsupportedError for --ep / --cp > 1 or --lnc.
TrainStep gpu_train_step(const ModelDesc& model, const TrainConfig& c, const hw::GpuSystemSpec& system,
                         const TrainConditions& conditions = {});

}  // namespace trnsim::workloads
