// The forward of one transformer layer as the training frameworks run it: through tuned
// kernels, timed on the kernel library in timing mode (DESIGN "analytical mode": measured once
// per shape, cached on disk beside the LLM node costs). Matmuls on the optimised matmul (the NKI
// tutorial's blocked, double-buffered structure: 91.6% of TensorE peak at 4096x8192x8192,
// docs/kernels.md), attention on the flash kernel over micro-batch x heads in one call, norms and
// activations on their kernels, residual adds, RoPE and the gate product at HBM bandwidth.
// The inference cost model (llm_node_cost.h) times compiler-lowered nodes instead, which match
// transformers-neuronx's published prefill but reach ~17% of TensorE peak on these matmuls and
// ~10% of HBM bandwidth on the unfused elementwise work (docs/training.md).
// Shapes are padded to the kernels' tiles; rows beyond 2,048 (and heads beyond 8) scale linearly.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "trnsim/hw/chip_spec.h"
#include "trnsim/workloads/llm_node_cost.h"
#include "trnsim/workloads/model_desc.h"

namespace trnsim::workloads {

class CostCache;

class TrainKernelCosts {
 public:
  // `cores`: physical NeuronCores of one logical core (they split the work).
  TrainKernelCosts(const hw::ChipSpec& chip, int cores, const std::string& dtype);
  ~TrainKernelCosts();
  // Time and dynamic energy (NodeCost) on one logical core.
  NodeCost matmul(int64_t m, int64_t k, int64_t n);  // [m, k] x [k, n] on one logical core
  NodeCost attention(int64_t heads, int64_t seq, int64_t head_dim, bool causal);
  NodeCost rowwise(const std::string& kernel, int64_t rows, int64_t cols, const std::string& func = "");
  NodeCost hbm(double bytes) const;                   // streaming at the core's HBM bandwidth (HBM energy)
  // Seconds only.
  double matmul_s(int64_t m, int64_t k, int64_t n) { return matmul(m, k, n).s; }
  double attention_s(int64_t heads, int64_t seq, int64_t hd, bool causal) { return attention(heads, seq, hd, causal).s; }
  double rowwise_s(const std::string& kernel, int64_t rows, int64_t cols, const std::string& func = "") {
    return rowwise(kernel, rows, cols, func).s;
  }
  double hbm_s(double bytes) const { return hbm(bytes).s; }

 private:
  NodeCost measure(const std::string& kernel, const std::map<std::string, std::string>& args, const std::string& dtype);
  const hw::ChipSpec& chip_;
  int cores_;
  std::string dtype_;
  std::unique_ptr<CostCache> cache_;
};

// Seconds of the forward of one micro-batch of `tokens` tokens (`sequences` of them) on one
// tensor-parallel rank, by component.
struct TrainKernelPass {
  NodeCost matmul, attention, other;  // seconds and energy of one logical core
};
struct TrainKernelLayers {
  TrainKernelPass dense_layer, moe_layer, ends;  // ends: LM head and the loss's softmax
};
TrainKernelLayers train_kernel_layers(const ModelDesc& m, int64_t sequences, int64_t seq, int cp, int tp,
                                      TrainKernelCosts& costs);

}  // namespace trnsim::workloads
