// The GPU baseline behind the same cost interface as Trainium (i_step_cost.h): a per-op
// roofline of one engine iteration of a decoder LLM on tensor-parallel GPUs of a GPU system
// (configs/gpus), with efficiency curves by op kind and size:
//   GEMM       max(FLOPs / (peak x gemm_max x rows / (rows + gemm_half_rows)),
//                  (weights + activations) / (HBM x memory))     -- efficiency rises with rows
//   attention  prefill: max(FLOPs / (peak x attention), KV bytes / (HBM x memory));
//              decode: KV bytes / (HBM x memory)                 -- memory-bound
//   other      norms, RoPE, activations, residuals: bytes / (HBM x memory)
//   launches   kernels_per_layer x layers x kernel_launch, plus step_overhead per iteration
//   TP         two all-reduces per layer: collective_latency + 2(tp-1)/tp x bytes / (NVLink/2 x nvlink)
// Dense and MoE (routed top-k) FFNs; tensor parallel within the NVLink domain; pp = ep = 1.
#pragma once
#include <memory>

#include "trnsim/hw/gpu_spec.h"
#include "trnsim/workloads/i_step_cost.h"

namespace trnsim::workloads {

// `deployment.system` names a GPU system (hw::is_gpu_system). ShapeError when the weights do
// not fit the GPUs' HBM; UnsupportedError for pp/ep > 1 or a dtype the GPU has no peak for.
std::unique_ptr<IStepCost> make_gpu_step_cost(const ModelDesc& model, const Deployment& deployment);
// The same on an already loaded system (tests, what-if GPUs).
std::unique_ptr<IStepCost> make_gpu_step_cost(const ModelDesc& model, const Deployment& deployment,
                                              const hw::GpuSystemSpec& system);

}  // namespace trnsim::workloads
