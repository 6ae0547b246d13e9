// Training matmuls timed on the kernel library's optimised matmul (the NKI tutorial's blocked,
// double-buffered structure: 91.6% of TensorE peak at 4096x8192x8192, docs/kernels.md), as the
// training frameworks run their projections through tuned kernels. The inference cost model
// (llm_node_cost.h) times the compiler-lowered MatMul instead, which matches transformers-
// neuronx's published prefill but reaches ~17% of peak at these shapes; trn1 training runs
// publish ~30% MFU end to end, which that rate cannot reach (docs/training.md).
// Shapes are padded to the kernel's tiles (M, K to 128, N to 512); times are measured in timing
// mode once per shape (cached on disk beside the LLM node costs) and linear in M beyond 2,048
// rows (whole blocks of output tiles).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "trnsim/hw/chip_spec.h"
#include "trnsim/workloads/model_desc.h"

namespace trnsim::workloads {

class CostCache;

class TrainMatmulCosts {
 public:
  // `cores`: physical NeuronCores of one logical core (they split N).
  TrainMatmulCosts(const hw::ChipSpec& chip, int cores, const std::string& dtype);
  ~TrainMatmulCosts();
  double seconds(int64_t m, int64_t k, int64_t n);  // [m, k] x [k, n] on one logical core
  int simulations() const { return simulations_; }

 private:
  double measure(int64_t m, int64_t k, int64_t n);
  const hw::ChipSpec& chip_;
  int cores_;
  numerics::DType dtype_;
  std::unique_ptr<CostCache> cache_;
  int simulations_ = 0;
};

// Seconds of the forward matmuls of one micro-batch of `tokens` tokens on one tensor-parallel
// rank: one layer (dense FFN or MoE) and the LM head over every token.
struct TrainMatmuls {
  double dense_layer = 0, moe_layer = 0, head = 0;
};
TrainMatmuls train_matmuls(const ModelDesc& m, int64_t tokens, int tp, TrainMatmulCosts& costs);

}  // namespace trnsim::workloads
