// A stand-in IStepCost for the training tests: a roofline of the forward's matmul FLOPs, causal
// attention FLOPs, two tensor-parallel collectives per layer and elementwise HBM traffic, so the
// training arithmetic can be checked against closed forms without the LLM cost model.
#pragma once
#include <memory>

#include "trnsim/workloads/i_step_cost.h"
#include "trnsim/workloads/train_layer_cost.h"
#include "trnsim/workloads/train_model_stats.h"

namespace trnsim::workloads::testing {

class FakeStepCost : public IStepCost {
 public:
  FakeStepCost(const ModelDesc& m, const Deployment& d) : m_(m), d_(d) {}
  StepCost step(const StepBatch& b) const override {
    const ModelStats s = model_stats(m_);
    const double per_layer = s.layer.attention + s.layer.norms +
                             (m_.moe.experts > 0 ? s.layer.expert_active + s.layer.shared_experts : s.layer.dense_ffn);
    double tokens = 0, attn = 0;
    for (const auto& p : b.prefills) {
      tokens += double(p.tokens);
      attn += 4.0 * double(p.tokens) * (double(p.context) + double(p.tokens) / 2) * m_.heads * m_.head_dim;
    }
    const double flops_per_ns = 95e3 * 0.5;  // half of a trn1 core's 95 TFLOPS, per ns
    StepCost c;
    c.matmul = Nanoseconds((2 * tokens * (per_layer * m_.layers + double(m_.vocab) * m_.hidden)) / d_.tp / flops_per_ns);
    c.attention = Nanoseconds(attn * m_.layers / d_.tp / flops_per_ns);
    c.collective = Nanoseconds(d_.tp > 1 ? 2 * 50e3 * m_.layers : 0.0);
    c.other = Nanoseconds(tokens * m_.hidden * 20.0 * m_.layers / d_.tp / 400.0);
    c.time = c.matmul + c.attention + c.collective + c.other;
    return c;
  }
  Bytes weight_bytes_per_core() const override { return Bytes(0); }
  Bytes kv_bytes_per_token_per_core() const override { return Bytes(0); }
  Bytes hbm_bytes_per_core() const override { return Bytes(16.0 * 1024 * 1024 * 1024); }
  int cores() const override { return d_.tp; }
  int chips() const override { return (d_.tp + 1) / 2; }

 private:
  ModelDesc m_;
  Deployment d_;
};

inline StepCostFactory fake_factory() {
  return [](const ModelDesc& m, const Deployment& d) { return std::make_unique<FakeStepCost>(m, d); };
}

// Public architectures (their papers / Hugging Face configs).
inline ModelDesc llama2_7b() {
  ModelDesc m;
  m.name = "llama-2-7b", m.family = "llama";
  m.hidden = 4096, m.intermediate = 11008, m.layers = 32, m.heads = 32, m.kv_heads = 32, m.head_dim = 128;
  m.vocab = 32000, m.max_positions = 4096;
  return m;
}
inline ModelDesc gpt3_175b() {  // Brown et al. 2020, table 2.1
  ModelDesc m;
  m.name = "gpt3-175b", m.family = "gpt3";
  m.hidden = 12288, m.intermediate = 4 * 12288, m.layers = 96, m.heads = 96, m.kv_heads = 96, m.head_dim = 128;
  m.vocab = 50257, m.max_positions = 2048, m.tie_embeddings = true, m.gated_ffn = false;
  return m;
}
inline ModelDesc llama2_70b() {
  ModelDesc m = llama2_7b();
  m.name = "llama-2-70b";
  m.hidden = 8192, m.intermediate = 28672, m.layers = 80, m.heads = 64, m.kv_heads = 8;
  return m;
}

}  // namespace trnsim::workloads::testing
