// Per-node costs of the LLM graphs on one logical NeuronCore, measured by the timing-mode
// simulator once per shape and cached on disk (llm_cost_cache.h); the analytical mode
// interpolates them over token counts and context lengths (DESIGN.md, "analytical mode").
//   matmul     [m, k] x [k, n] compiled by the compiler (weights a bf16 graph input: no data)
//   attention  the flash kernel (kernels/attention.h): causal prefill or a decode step
//   pointwise  one layer's element-wise work (two RMSNorms, RoPE, SwiGLU, residuals), fused as
//              Neuron runs it: one program of fused groups (llm_fused_pointwise.h)
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "trnsim/compiler/compiled_model.h"
#include "trnsim/hw/chip_spec.h"
#include "trnsim/workloads/unit_energy.h"

namespace trnsim::workloads {

class CostCache;

// Added by energy: a node's time and the dynamic energy of its timing-mode run on one logical
// core (its engines, SBUF/PSUM and HBM; no static power), interpolated alike.
struct NodeCost {
  double s = 0;
  UnitEnergy e;
  friend NodeCost operator+(NodeCost a, const NodeCost& b) { return {a.s + b.s, a.e + b.e}; }
  NodeCost& operator+=(const NodeCost& b) { return *this = *this + b; }
  friend NodeCost operator-(NodeCost a, const NodeCost& b) { return {a.s - b.s, a.e - b.e}; }
  friend NodeCost operator*(NodeCost a, double k) { return {a.s * k, a.e * k}; }
  friend NodeCost operator/(NodeCost a, double k) {  // as a double divides (the times keep their bits)
    for (double& v : a.e.j) v /= k;
    return {a.s / k, a.e};
  }
};

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

  // Time and energy, interpolated between measured grid points (exact at grid points).
  NodeCost matmul(int64_t m, int64_t k, int64_t n);  // [m, k] x [k, n]
  // Causal self-attention of `heads` heads over `seq` new tokens (seq_q == seq_k).
  NodeCost prefill_attention(int64_t heads, int64_t seq, int64_t head_dim);
  // Non-causal attention of `rows` query rows per head to `keys` cached keys: a decode step
  // (rows = the query heads sharing one KV head) or a prefill chunk's past context.
  NodeCost cross_attention(int64_t heads, int64_t rows, int64_t keys, int64_t head_dim);
  // A decode step's attention for a whole batch in one kernel: `heads` = sequences x KV heads
  // per rank, `keys` their mean length (the kernel's work is linear in each head's keys).
  // Interpolated over heads as well.
  NodeCost decode_attention(int64_t heads, int64_t rows, int64_t keys, int64_t head_dim);
  // One layer's element-wise work for m tokens: hidden h, local FFN width i, local q+k width.
  NodeCost pointwise(int64_t m, int64_t h, int64_t i, int64_t qk);
  // The norms-and-residuals part of it alone (two RMSNorms, two adds on [m, h]).
  NodeCost norms(int64_t m, int64_t h);

  // The same without interpolation: one timing-mode run (cached). For tests and benches.
  NodeCost measure_matmul(int64_t m, int64_t k, int64_t n);
  NodeCost measure_attention(int64_t heads, int64_t rows, int64_t keys, int64_t head_dim, bool causal);
  NodeCost measure_pointwise(int64_t m, int64_t h, int64_t i, int64_t qk);
  NodeCost measure_norms(int64_t m, int64_t h);

  // Seconds only (the above's .s).
  double matmul_s(int64_t m, int64_t k, int64_t n) { return matmul(m, k, n).s; }
  double prefill_attention_s(int64_t heads, int64_t seq, int64_t hd) { return prefill_attention(heads, seq, hd).s; }
  double cross_attention_s(int64_t heads, int64_t rows, int64_t keys, int64_t hd) {
    return cross_attention(heads, rows, keys, hd).s;
  }
  double decode_attention_s(int64_t heads, int64_t rows, int64_t keys, int64_t hd) {
    return decode_attention(heads, rows, keys, hd).s;
  }
  double pointwise_s(int64_t m, int64_t h, int64_t i, int64_t qk) { return pointwise(m, h, i, qk).s; }
  double norms_s(int64_t m, int64_t h) { return norms(m, h).s; }
  double measure_matmul_s(int64_t m, int64_t k, int64_t n) { return measure_matmul(m, k, n).s; }
  double measure_attention_s(int64_t heads, int64_t rows, int64_t keys, int64_t hd, bool causal) {
    return measure_attention(heads, rows, keys, hd, causal).s;
  }
  double measure_pointwise_s(int64_t m, int64_t h, int64_t i, int64_t qk) { return measure_pointwise(m, h, i, qk).s; }
  double measure_norms_s(int64_t m, int64_t h) { return measure_norms(m, h).s; }

  int simulations() const { return simulations_; }  // timing-mode runs this object made
  double simulation_wall_s() const { return sim_wall_s_; }

 private:
  template <class F>
  NodeCost cached(const std::string& key, F&& measure);
  NodeCost time_graph(compiler::Graph g) const;  // compile, run in timing mode
  NodeCost time_program(const isa::Program& p) const;  // a kernel program in timing mode

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
