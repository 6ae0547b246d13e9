// The GPU baseline behind the same cost interface as Trainium (i_step_cost.h): a per-op
// roofline of one engine iteration of a decoder LLM on tensor-parallel GPUs of a GPU system
// (configs/gpus), with efficiency curves by op kind and size:
//   GEMM       max(FLOPs / (peak x gemm_max x rows / (rows + gemm_half_rows)),
//                  (weights + activations) / (HBM x memory))     -- efficiency rises with rows
//   attention  prefill: max(FLOPs / (peak x attention), KV bytes / (HBM x memory)), plus
//              decode: KV bytes / (HBM x memory)                 -- separate kernels, times add
//   other      norms, RoPE, activations, residuals: bytes / (HBM x memory)
//   launches   kernels_per_layer x layers x kernel_launch, plus step_overhead per iteration
//   TP         two all-reduces per layer: collective_latency + 2(tp-1)/tp x bytes / (NVLink/2 x nvlink)
// Dense and MoE (routed top-k) FFNs; tensor parallel within the NVLink domain; pp = ep = 1.
#pragma once
#include <memory>

#include "trnsim/hw/gpu_spec.h"
#include "trnsim/workloads/i_step_cost.h"

namespace trnsim::workloads {

class GpuStepCost : public IStepCost {
 public:
  GpuStepCost(const ModelDesc& model, const Deployment& deployment, const hw::GpuSystemSpec& system);

  StepCost step(const StepBatch& batch) const override;
  Bytes weight_bytes_per_core() const override;
  Bytes kv_bytes_per_token_per_core() const override;
  Bytes hbm_bytes_per_core() const override { return s_.gpu.hbm.capacity; }
  int cores() const override { return d_.tp; }
  int chips() const override { return d_.tp; }
  Watts idle_power() const override;
  Watts host_power() const override;

  // Added by gpullm (for `trnsim llm` on GPUs): activation bytes per GPU of the largest step of
  // `batch` (the hidden states of its tokens at the widest point of a layer, and the logits),
  // counted as the Trainium model counts them (TrainiumStepCost::activation_bytes_per_core).
  Bytes activation_bytes_per_core(const StepBatch& batch) const;
  // One GEMM of rows x k by k x n on each of the tp GPUs (time in `matmul`, dynamic energy of all
  // tp GPUs): training's LM head over every token, which an inference step does not run.
  StepCost gemm_cost(double rows, double k, double n) const;
  const ModelDesc& model() const { return m_; }
  const Deployment& deployment() const { return d_; }
  const hw::GpuSystemSpec& system() const { return s_; }

 private:
  struct Tally;
  bool moe_layer(int64_t l) const { return m_.moe.experts > 0 && l >= m_.moe.first_dense_layers; }
  int64_t matrices() const { return m_.gated_ffn ? 3 : 2; }
  double ffn_params(int64_t l, bool touched) const;
  void gemm(Tally& t, double rows, double k, double n) const;
  void ffn(Tally& t, double rows, int64_t l) const;
  void attention(Tally& t, const StepBatch& b) const;
  void other(Tally& t, double bytes) const;
  void all_reduce(Tally& t, double bytes) const;
  double bw() const { return s_.gpu.hbm.bandwidth.value() * 1e9; }

  ModelDesc m_;
  Deployment d_;
  hw::GpuSystemSpec s_;
  double peak_ = 0, flop_j_ = 0, wbytes_ = 2, abytes_ = 2, kvbytes_ = 2, hd_ = 128;
  int64_t kv_shards_ = 1;
};

// `deployment.system` names a GPU system (hw::is_gpu_system), at deployment.clock_scale. ShapeError when the weights do
// not fit the GPUs' HBM; UnsupportedError for pp/ep > 1 or a dtype the GPU has no peak for.
std::unique_ptr<IStepCost> make_gpu_step_cost(const ModelDesc& model, const Deployment& deployment);
// The GPU system of `deployment` with its SM clocks at deployment.clock_scale (gpu_at_clock_scale).
hw::GpuSystemSpec gpu_system_of(const Deployment& deployment);
// The same on an already loaded system (tests, what-if GPUs).
std::unique_ptr<IStepCost> make_gpu_step_cost(const ModelDesc& model, const Deployment& deployment,
                                              const hw::GpuSystemSpec& system);

}  // namespace trnsim::workloads
