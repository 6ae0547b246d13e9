#include "trnsim/workloads/train_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "trnsim/common/error.h"
#include "trnsim/workloads/train_model_stats.h"

namespace trnsim::workloads {

RankParams rank_params(const ModelDesc& m, const TrainConfig& c, int stage) {
  const ModelStats s = model_stats(m);
  // Layers split as evenly as they go; the first `layers % pp` stages take one more.
  const int64_t base = m.layers / c.pp, extra = m.layers % c.pp;
  const int64_t first = stage * base + std::min<int64_t>(stage, extra);
  const int64_t count = base + (stage < extra ? 1 : 0);
  int64_t dense_layers = 0;
  for (int64_t i = first; i < first + count; ++i) dense_layers += i < s.dense_layers ? 1 : 0;
  const int64_t moe_layers = count - dense_layers;
  RankParams p;
  const double common = s.layer.attention + s.layer.norms;
  p.dense = (dense_layers * (common + s.layer.dense_ffn) + moe_layers * (common + s.layer.shared_experts)) / c.tp;
  p.expert = moe_layers * s.layer.experts / (double(c.tp) * c.ep);
  if (stage == 0) p.dense += s.embedding / c.tp;
  if (stage == c.pp - 1) p.dense += (s.head > 0 ? s.head : (c.pp > 1 ? double(m.vocab) * m.hidden : 0.0)) / c.tp;
  return p;
}

double weight_bytes_per_param(const TrainConfig& c) { return 2.0; }  // bf16 (fp8 casts on the fly)
double grad_bytes_per_param(const TrainConfig& c) { return c.precision == Precision::MasterFp32 ? 4.0 : 2.0; }
double optimizer_bytes_per_param(const TrainConfig& c) {
  return (c.precision == Precision::MasterFp32 ? 4.0 : 0.0) + 8.0;  // master + two fp32 moments
}

MemoryUse memory_per_core(const ModelDesc& m, const TrainConfig& c, const TrainLayout& l,
                          const std::vector<int64_t>& in_flight, double hbm_per_core) {
  MemoryUse worst;
  const double dp_shard = double(l.dp) * l.cp;  // ranks holding the same weights
  const double tokens = double(c.micro_batch) * c.seq / c.cp;
  const int v = c.schedule == PipelineSchedule::Interleaved ? c.virtual_stages : 1;
  for (int s = 0; s < c.pp; ++s) {
    const RankParams p = rank_params(m, c, s);
    const double expert_shard = std::max(1.0, dp_shard / c.ep);
    auto shard = [&](double per_param, bool sharded) {
      return per_param * (sharded ? p.dense / dp_shard + p.expert / expert_shard : p.total());
    };
    MemoryUse u;
    u.stage = s;
    u.capacity = hbm_per_core;
    u.weights = shard(weight_bytes_per_param(c), c.zero >= 3);
    u.gradients = shard(grad_bytes_per_param(c), c.zero >= 2);
    u.optimizer = shard(optimizer_bytes_per_param(c), c.zero >= 1);
    const int64_t layers = m.layers / c.pp + (s < m.layers % c.pp ? 1 : 0);
    const double per_layer = activation_bytes_per_token_per_layer(m, c.recompute, c.tp, 2.0);
    const double held = in_flight.empty() ? 1.0 : double(in_flight[size_t(s)]);
    // A chunk holds layers / v of the stage's layers; full recompute also materialises one
    // layer's full activations while it recomputes it.
    u.activations = tokens * held * per_layer * layers / v;
    if (c.recompute == Recompute::Full)
      u.activations += tokens * activation_bytes_per_token_per_layer(m, Recompute::None, c.tp, 2.0);
    // The last stage's logits (bf16) and their fp32 softmax for the loss, of one micro-batch.
    if (s == c.pp - 1) u.activations += tokens * double(m.vocab) * 6.0 / c.tp;
    if (u.total() > worst.total()) worst = u;
  }
  return worst;
}

void check_fits(const MemoryUse& u, const TrainConfig& c, const std::string& model, const char* unit) {
  if (u.total() <= u.capacity) return;
  constexpr double g = 1024.0 * 1024.0 * 1024.0;
  std::string hint = c.zero < 3 ? fmt::format("--zero {}", c.zero + 1) : "";
  if (c.recompute != Recompute::Full) hint += std::string(hint.empty() ? "" : ", ") + "--recompute full";
  hint += std::string(hint.empty() ? "" : ", ") + "a larger --tp or --pp, or a smaller --micro-batch";
  throw ShapeError(fmt::format(
      "train: {} does not fit: pipeline stage {} needs {:.2f} GiB per {} (weights {:.2f}, gradients {:.2f}, "
      "optimizer {:.2f}, activations {:.2f}) but a {} has {:.2f} GiB: over by {:.2f} GiB; try {}",
      model, u.stage, u.total() / g, unit, u.weights / g, u.gradients / g, u.optimizer / g, u.activations / g, unit,
      u.capacity / g, (u.total() - u.capacity) / g, hint));
}

}  // namespace trnsim::workloads
