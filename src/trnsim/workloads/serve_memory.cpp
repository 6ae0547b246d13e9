#include "trnsim/workloads/serve_memory.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "trnsim/common/error.h"

namespace trnsim::workloads {

double activation_bytes_estimate(const ModelDesc& m, int tp, int64_t tokens, int max_seqs) {
  const double bytes = 2.0;  // bf16 activations
  const int64_t ffn = m.moe.experts > 0 ? std::max(m.intermediate, m.moe.expert_intermediate * m.moe.experts_per_token)
                                        : m.intermediate;
  const double qkv = static_cast<double>((m.heads + 2 * m.kv_heads) * m.head_dim) / tp;
  const double per_token = 2.0 * m.hidden + qkv + (m.gated_ffn ? 2.0 : 1.0) * ffn / tp;
  const double logits = static_cast<double>(max_seqs) * m.vocab / tp * 4.0;  // fp32 logits
  return static_cast<double>(tokens) * per_token * bytes + logits;
}

KvCacheSize size_kv_cache(const IStepCost& cost, const EngineOptions& e, double activation_bytes) {
  KvCacheSize s;
  s.hbm_bytes = cost.hbm_bytes_per_core().value();
  s.weight_bytes = cost.weight_bytes_per_core().value();
  s.activation_bytes = activation_bytes;
  const double per_block = cost.kv_bytes_per_token_per_core().value() * e.block_tokens;
  if (e.kv_blocks > 0) {
    s.blocks = e.kv_blocks;
    s.kv_bytes = per_block * static_cast<double>(s.blocks);
    return s;
  }
  if (!(e.hbm_utilization > 0 && e.hbm_utilization <= 1))
    throw ConfigError(fmt::format("--hbm-utilization {}: expected a fraction in (0, 1]", e.hbm_utilization));
  s.kv_bytes = s.hbm_bytes * e.hbm_utilization - s.weight_bytes - s.activation_bytes;
  const double gib = 1024.0 * 1024.0 * 1024.0;
  if (s.kv_bytes < per_block)
    throw ShapeError(fmt::format("deployment does not fit: per core, weights {:.2f} GiB + activations {:.2f} GiB leave "
                                 "no KV cache in {:.2f} GiB of HBM x {} (--hbm-utilization); use more --tp, fp8 "
                                 "weights or a smaller --max-batched-tokens",
                                 s.weight_bytes / gib, s.activation_bytes / gib, s.hbm_bytes / gib, e.hbm_utilization));
  s.blocks = static_cast<int64_t>(std::floor(s.kv_bytes / per_block));
  return s;
}

}  // namespace trnsim::workloads
