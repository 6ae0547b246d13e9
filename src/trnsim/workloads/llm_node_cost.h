// Per-node costs of the LLM graphs on one logical NeuronCore, measured by the timing-mode
// simulator once per shape and cached on disk (llm_cost_cache.h); the analytical mode
// interpolates them over token counts and context lengths (DESIGN.md, "analytical mode").
//   matmul     [m, k] x [k, n] compiled by the compiler (weights a bf16 graph input: no data)
//   attention  the flash kernel (kernels/attention.h): causal prefill or a decode step
//   pointwise  one layer's element-wise work per token (two RMSNorms, RoPE, SwiGLU, residuals)
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "trnsim/compiler/compiled_model.h"
#include "trnsim/hw/chip_spec.h"

namespace trnsim::workloads {

class CostCache;

struct NodeCostOptions {
  int cores = 1;  // physical NeuronCores of one logical core (LNC)
  compiler::DTypePolicy policy = compiler::DTypePolicy::BF16;
  bool use_disk_cache = true;
  bool interpolate = true;  // false: every query is its own timing-mode run (the mode it replaces)
};

class NodeCosts {
 public:
  NodeCosts(const hw::ChipSpec& chip, NodeCostOptions options);
  ~NodeCosts();

  // Seconds, interpolated between measured grid points (exact at grid points).
  double matmul_s(int64_t m, int64_t k, int64_t n);
  // Causal self-attention of `heads` heads over `seq` new tokens (seq_q == seq_k).
  double prefill_attention_s(int64_t heads, int64_t seq, int64_t head_dim);
  // Non-causal attention of `rows` query rows per head to `keys` cached keys: a decode step
  // (rows = the query heads sharing one KV head) or a prefill chunk's past context.
  double cross_attention_s(int64_t heads, int64_t rows, int64_t keys, int64_t head_dim);
  // One layer's element-wise work for m tokens: hidden h, local FFN width i, local q+k width.
  double pointwise_s(int64_t m, int64_t h, int64_t i, int64_t qk);

  // The same without interpolation: one timing-mode run (cached). For tests and benches.
  double measure_matmul_s(int64_t m, int64_t k, int64_t n);
  double measure_attention_s(int64_t heads, int64_t rows, int64_t keys, int64_t head_dim, bool causal);
  double measure_pointwise_s(int64_t m, int64_t h, int64_t i, int64_t qk);

  int simulations() const { return simulations_; }  // timing-mode runs this object made
  double simulation_wall_s() const { return sim_wall_s_; }

 private:
  template <class F>
  double cached(const std::string& key, F&& measure);

  const hw::ChipSpec& chip_;
  NodeCostOptions opt_;
  std::unique_ptr<CostCache> cache_;
  int simulations_ = 0;
  double sim_wall_s_ = 0;
};

// Interpolation grids (exposed for tests): token counts and context lengths.
int64_t grid_below(int64_t x);  // the largest grid point <= x (x >= 1)
int64_t grid_above(int64_t x);  // the smallest grid point >= x

}  // namespace trnsim::workloads
