#include "trnsim/workloads/train_model_stats.h"

#include <algorithm>

namespace trnsim::workloads {
namespace {

bool learned_positions(const ModelDesc& m) {
  return m.encoder;
}

double attention_params(const ModelDesc& m) {
  const double h = double(m.hidden);
  if (m.mla.enabled) {
    const auto& a = m.mla;
    const double qk = double(a.qk_nope_head_dim + a.qk_rope_head_dim);
    const double q = a.q_lora_rank > 0 ? h * a.q_lora_rank + double(a.q_lora_rank) * m.heads * qk : h * m.heads * qk;
    const double kv = h * double(a.kv_lora_rank + a.qk_rope_head_dim) +
                      double(a.kv_lora_rank) * m.heads * double(a.qk_nope_head_dim + a.v_head_dim);
    return q + kv + double(m.heads) * a.v_head_dim * h;
  }
  const double q = double(m.heads) * m.head_dim, kv = double(m.kv_heads) * m.head_dim;
  return h * (q + 2 * kv) + q * h;
}

double ffn_params(const ModelDesc& m, int64_t width) {
  return (m.gated_ffn ? 3.0 : 2.0) * double(m.hidden) * double(width);
}

}  // namespace

ModelStats model_stats(const ModelDesc& m) {
  ModelStats s;
  const double h = double(m.hidden);
  s.layer.attention = attention_params(m);
  s.layer.dense_ffn = ffn_params(m, m.intermediate);
  s.layer.norms = 2 * h;
  if (m.moe.experts > 0) {
    const double one = ffn_params(m, m.moe.expert_intermediate);
    s.layer.experts = one * m.moe.experts;
    s.layer.expert_active = one * m.moe.experts_per_token;
    s.layer.shared_experts = one * m.moe.shared_experts + h * m.moe.experts;  // + router
    s.dense_layers = std::min<int64_t>(m.moe.first_dense_layers, m.layers);
    s.moe_layers = m.layers - s.dense_layers;
  } else {
    s.dense_layers = m.layers;
  }
  // Token embeddings (+ the final norm, which lives beside the head); encoders: learned
  // positions, token types and the pooler.
  s.embedding = double(m.vocab) * h + h +
                (learned_positions(m) ? double(m.max_positions + m.type_vocab) * h + h * h : 0.0);
  s.head = m.tie_embeddings ? 0.0 : double(m.vocab) * h;
  const double common = s.layer.attention + s.layer.norms;
  const double dense = s.dense_layers * (common + s.layer.dense_ffn);
  s.total = dense + s.moe_layers * (common + s.layer.experts + s.layer.shared_experts) + s.embedding + s.head;
  const double active_layers =
      dense + s.moe_layers * (common + s.layer.expert_active + s.layer.shared_experts);
  s.active = active_layers + s.embedding + s.head;
  s.non_embedding_active = active_layers + double(m.vocab) * h;  // the head's matmul, tied or not
  return s;
}

double train_flops_per_token(const ModelDesc& m, int64_t seq) {
  const double attn_width = double(m.heads) * (m.mla.enabled ? m.mla.v_head_dim : m.head_dim);
  return 6.0 * model_stats(m).non_embedding_active + 12.0 * double(m.layers) * attn_width * double(seq);
}

double activation_bytes_per_token_per_layer(const ModelDesc& m, Recompute r, int tp, double b) {
  const double h = double(m.hidden);
  if (r == Recompute::Full) return b * h / tp;  // only the layer's input; the rest is recomputed
  const double q = double(m.heads) * m.head_dim, kv = double(m.kv_heads) * m.head_dim;
  const double width = m.moe.experts > 0
                           ? double(m.moe.expert_intermediate) * (m.moe.experts_per_token + m.moe.shared_experts)
                           : double(m.intermediate);
  // Stored for the backward: norm-1 input and output, Q K V, attention output (+ log-sum-exp,
  // negligible), norm-2 input and output, FFN up (and gate) output, activation output.
  const double attention = b * (2 * h + q + 2 * kv + q);
  const double ffn_in = b * 2 * h;
  const double up = b * width * (m.gated_ffn ? 2.0 : 1.0);
  const double act = b * width;
  // Selective recompute (Korthikanti et al. 2022) recomputes the cheap, memory-heavy parts: the
  // attention core (its Q K V inputs stay: they are the projection's output) and the FFN
  // activation, so the activation output is dropped.
  const double kept = r == Recompute::Selective ? attention + ffn_in + up : attention + ffn_in + up + act;
  return kept / tp;
}

}  // namespace trnsim::workloads
