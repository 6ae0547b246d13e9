#include "trnsim/workloads/llm_layout.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"

namespace trnsim::workloads {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// KV heads per rank as NxD Inference shards attention (modules/attention/gqa.py:
// determine_sharding_strategy, get_shardable_head_counts): the query heads are padded up to a
// multiple of tp; MHA pads its KV heads with them; GQA splits its KV heads when tp divides
// them, replicates them to tp (one per rank, REPLICATE_TO_TP_DEGREE) when they divide tp,
// and otherwise converts to MHA (CONVERT_TO_MHA: one KV head per padded query head).
int64_t kv_heads_per_rank(const ModelDesc& m, int64_t tp, int64_t q_heads_per_rank) {
  if (m.kv_heads == m.heads) return q_heads_per_rank;
  if (m.kv_heads % tp == 0) return m.kv_heads / tp;
  if (tp % m.kv_heads == 0) return 1;
  return q_heads_per_rank;
}

}  // namespace

int dtype_bytes(const std::string& dtype, const std::string& field) {
  if (dtype == "bf16" || dtype == "fp16") return 2;
  if (dtype == "fp8" || dtype == "int8") return 1;
  if (dtype == "fp32") return 4;
  throw ConfigError(fmt::format("--{}: '{}' is not one of bf16, fp8, int8", field, dtype));
}

Layout make_layout(const ModelDesc& m, const Deployment& d, const hw::SystemSpec& system) {
  Layout l;
  l.tp = d.tp;
  l.pp = d.pp;
  l.ep = d.ep;
  if (d.lnc < 0) throw ConfigError(fmt::format("--lnc {}: expected 1 or 2, or 0 for the chip's default", d.lnc));
  l.lnc = d.lnc > 0 ? d.lnc : default_lnc(system.chip);
  if (l.tp < 1 || l.pp < 1 || l.ep < 1) throw ConfigError("--tp, --pp and --ep must be >= 1");
  if (system.chip.neuron_cores % l.lnc != 0)
    throw ConfigError(fmt::format("--lnc {}: {} has {} NeuronCores per chip, which {} does not divide", l.lnc,
                                  system.chip.name, system.chip.neuron_cores, l.lnc));
  l.lcores_per_chip = system.chip.neuron_cores / l.lnc;
  const int64_t ranks = static_cast<int64_t>(l.tp) * l.pp;
  const int64_t available = static_cast<int64_t>(system.chips) * l.lcores_per_chip;
  if (ranks > available)
    throw ShapeError(fmt::format("tp {} x pp {} = {} ranks, but {} has {} logical NeuronCores (lnc {})", l.tp, l.pp, ranks,
                                 system.name, available, l.lnc));
  if (l.pp > m.layers) throw ShapeError(fmt::format("pp {} exceeds the {} layers of {}", l.pp, m.layers, m.name));
  if (m.moe.experts == 0 && l.ep > 1) throw ConfigError(fmt::format("--ep {}: {} has no experts", l.ep, m.name));
  if (l.tp % l.ep != 0) throw ConfigError(fmt::format("--ep {} must divide --tp {} (experts are sharded over tp / ep ranks)", l.ep, l.tp));
  if (m.moe.experts > 0 && m.moe.experts % l.ep != 0)
    throw ConfigError(fmt::format("--ep {} does not divide the {} experts of {}", l.ep, m.moe.experts, m.name));
  l.chips = static_cast<int>(ceil_div(ranks, l.lcores_per_chip));
  l.q_heads = ceil_div(m.heads, l.tp);
  l.kv_heads = kv_heads_per_rank(m, l.tp, l.q_heads);
  l.ffn = ceil_div(m.intermediate, l.tp);
  if (m.moe.experts > 0) {
    l.experts = m.moe.experts / l.ep;
    l.expert_ffn = ceil_div(m.moe.expert_intermediate, l.tp / l.ep);
    l.shared_ffn = ceil_div(m.moe.expert_intermediate * m.moe.shared_experts, l.tp);
  }
  l.vocab = ceil_div(m.vocab, l.tp);
  l.layers_per_stage = ceil_div(m.layers, l.pp);
  l.weight_bytes = dtype_bytes(d.weights, "weights");
  l.kv_bytes = dtype_bytes(d.kv_dtype, "kv-dtype");
  dtype_bytes(d.dtype, "dtype");
  return l;
}

int64_t Layout::layer_weights(const ModelDesc& m, int64_t layer) const {
  const int64_t h = m.hidden;
  int64_t w = 2 * h;  // norms
  if (m.mla.enabled) {
    const auto& a = m.mla;
    const int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    w += (a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank * q_heads * qk : h * q_heads * qk) +
         h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank * q_heads * (a.qk_nope_head_dim + a.v_head_dim) +
         q_heads * a.v_head_dim * h;
  } else {
    w += h * (q_heads + 2 * kv_heads) * m.head_dim + q_heads * m.head_dim * h;
  }
  if (!m.layer_is_moe(layer)) return w + (m.gated_ffn ? 3 : 2) * h * ffn;
  return w + experts * 3 * h * expert_ffn + 3 * h * shared_ffn + h * m.moe.experts;
}

int64_t Layout::layer_kv(const ModelDesc& m) const {
  if (m.mla.enabled) return m.mla.kv_lora_rank + m.mla.qk_rope_head_dim;  // the latent, on every rank
  return 2 * kv_heads * m.head_dim;
}

}  // namespace trnsim::workloads
