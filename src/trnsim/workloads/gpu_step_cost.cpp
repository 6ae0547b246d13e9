#include "trnsim/workloads/gpu_step_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "trnsim/common/error.h"
#include "trnsim/numerics/dtype.h"

namespace trnsim::workloads {
namespace {

double dtype_bytes(const std::string& name, const char* field) {
  if (name == "fp32") return 4;
  if (name == "bf16" || name == "fp16") return 2;
  if (name == "fp8" || name == "int8") return 1;
  if (name == "fp4" || name == "mxfp4") return 0.5;
  throw ConfigError(fmt::format("deployment {}: '{}' is not one of fp32, bf16, fp16, fp8, int8, fp4", field, name));
}

numerics::DType compute_dtype(const std::string& name) {
  if (name == "bf16" || name == "fp16") return numerics::DType::BF16;
  if (name == "fp8") return numerics::DType::F8E4M3;
  if (name == "fp4" || name == "mxfp4") return numerics::DType::MXFP4;
  throw ConfigError(fmt::format("deployment dtype: '{}' is not one of bf16, fp16, fp8, fp4", name));
}

}  // namespace

// Time and work of the ops of one iteration on one GPU (a tp shard).
struct GpuStepCost::Tally {
  double gemm_s = 0, attention_s = 0, collective_s = 0, other_s = 0;
  double flops = 0, hbm_bytes = 0, nvlink_bytes = 0;
};

GpuStepCost::GpuStepCost(const ModelDesc& m, const Deployment& d, const hw::GpuSystemSpec& s) : m_(m), d_(d), s_(s) {
  if (d.pp != 1 || d.ep != 1)
    throw UnsupportedError(fmt::format("GPU baseline: tensor parallel only (pp {} and ep {} must be 1)", d.pp, d.ep));
  if (d.tp < 1 || d.tp > s.nvlink_domain)
    throw ConfigError(fmt::format("GPU baseline: tp {} must be 1..{} (the NVLink domain of {})", d.tp, s.nvlink_domain, s.name));
  // vLLM's tensor parallelism (verify_with_parallel_config, QKVParallelLinear) shards heads
  // evenly: tp divides the attention heads, and divides the KV heads or is a multiple of them.
  if (m.heads % d.tp != 0)
    throw ConfigError(fmt::format("GPU baseline: {} has {} attention heads, which tp {} does not divide (vLLM shards heads "
                                  "evenly)", m.name, m.heads, d.tp));
  if (m.kv_heads % d.tp != 0 && d.tp % m.kv_heads != 0)
    throw ConfigError(fmt::format("GPU baseline: {} has {} KV heads, which tp {} neither divides nor is a multiple of "
                                  "(vLLM splits or replicates KV heads evenly)", m.name, m.kv_heads, d.tp));
  if (m.mla.enabled) throw UnsupportedError("GPU baseline: multi-head latent attention (MLA) is not modelled");
  peak_ = s.gpu.peak(compute_dtype(d.dtype)).value() * 1e12;
  flop_j_ = s.gpu.energy.per_flop.value() * s.gpu.peak(numerics::DType::BF16).value() * 1e12 / peak_;
  wbytes_ = dtype_bytes(d.weights, "weights");
  abytes_ = 2;  // activations in bf16
  kvbytes_ = dtype_bytes(d.kv_dtype, "kv_dtype");
  const int64_t head_dim = m.head_dim > 0 ? m.head_dim : m.hidden / m.heads;
  hd_ = static_cast<double>(head_dim);
  kv_shards_ = std::min<int64_t>(d.tp, m.kv_heads);  // KV heads replicate when tp > kv_heads
  if (weight_bytes_per_core().value() >= hbm_bytes_per_core().value())
    throw ShapeError(fmt::format("{} does not fit: {:.1f} GB of weights per GPU at tp {} on {} ({:.0f} GB HBM)", m.name,
                                 weight_bytes_per_core().value() / 1e9, d.tp, s.gpu.display_name,
                                 hbm_bytes_per_core().value() / 1e9));
}

StepCost GpuStepCost::step(const StepBatch& b) const {
  Tally t;
  double rows = static_cast<double>(b.decode_contexts.size());
  for (const auto& p : b.prefills) rows += static_cast<double>(p.tokens);
  const double logits = static_cast<double>(b.prefills.size() + b.decode_contexts.size());
  if (rows <= 0) return {};
  const auto& e = s_.gpu.efficiency;
  const double tp = d_.tp, h = static_cast<double>(m_.hidden);
  const double qkv = (static_cast<double>(m_.heads) + 2.0 * static_cast<double>(m_.kv_heads)) * hd_;
  for (int64_t l = 0; l < m_.layers; ++l) {
    gemm(t, rows, h, qkv / tp);
    gemm(t, rows, static_cast<double>(m_.heads) * hd_ / tp, h);
    ffn(t, rows, l);
    attention(t, b);
    other(t, rows * h * abytes_ * 8);  // 2 norms, RoPE, activation, 2 residuals: ~8 passes
    if (d_.tp > 1)
      for (int k = 0; k < 2; ++k) all_reduce(t, rows * h * abytes_);
  }
  gemm(t, logits, h, static_cast<double>(m_.vocab) / tp);  // LM head
  const double launches = static_cast<double>(m_.layers * e.kernels_per_layer) * e.kernel_launch.value() * 1e-9 +
                          e.step_overhead.value() * 1e-9;
  StepCost c;
  const double total = t.gemm_s + t.attention_s + t.collective_s + t.other_s + launches;
  c.time = Nanoseconds(total * 1e9);
  c.matmul = Nanoseconds(t.gemm_s * 1e9);
  c.attention = Nanoseconds(t.attention_s * 1e9);
  c.collective = Nanoseconds(t.collective_s * 1e9);
  c.other = Nanoseconds((t.other_s + launches) * 1e9);
  const auto& en = s_.gpu.energy;
  c.energy_by_unit[EnergyUnit::Static] = en.static_power.value() * total * tp;
  c.energy_by_unit[EnergyUnit::SM] = t.flops * flop_j_ * tp;
  c.energy_by_unit[EnergyUnit::HBM] = t.hbm_bytes * en.hbm_per_byte.value() * tp;
  c.energy_by_unit[EnergyUnit::NVLink] = t.nvlink_bytes * en.nvlink_per_byte.value() * tp;
  c.energy = Joules(c.energy_by_unit.total());
  return c;
}

Bytes GpuStepCost::weight_bytes_per_core() const {
  const double h = static_cast<double>(m_.hidden), tp = d_.tp;
  const double attn = h * (static_cast<double>(m_.heads) + 2.0 * static_cast<double>(m_.kv_heads)) * hd_ +
                      static_cast<double>(m_.heads) * hd_ * h;
  double ffn = 0;
  for (int64_t l = 0; l < m_.layers; ++l) ffn += ffn_params(l, false);
  const double embed = static_cast<double>(m_.vocab) * h * (m_.tie_embeddings ? 1 : 2);
  return Bytes((attn * static_cast<double>(m_.layers) + ffn + embed) * wbytes_ / tp);
}

Bytes GpuStepCost::kv_bytes_per_token_per_core() const {
  return Bytes(2.0 * static_cast<double>(m_.layers * m_.kv_heads) * hd_ * kvbytes_ / static_cast<double>(kv_shards_));
}

Watts GpuStepCost::idle_power() const { return Watts(s_.gpu.energy.static_power.value() * d_.tp); }

Watts GpuStepCost::host_power() const {
  return Watts(s_.energy.host_power_per_instance.value() * d_.tp / std::max(1, s_.gpus_per_instance));
}

Bytes GpuStepCost::activation_bytes_per_core(const StepBatch& b) const {
  double tokens = static_cast<double>(b.decode_contexts.size());
  for (const auto& p : b.prefills) tokens += static_cast<double>(p.tokens);
  const double tp = d_.tp, h = static_cast<double>(m_.hidden);
  const double ffn = m_.moe.experts > 0 ? static_cast<double>(m_.moe.expert_intermediate) * (1 + m_.moe.shared_experts)
                                        : static_cast<double>(m_.intermediate);
  const double width = 3 * h + (static_cast<double>(m_.heads) + 2.0 * static_cast<double>(m_.kv_heads)) * hd_ / tp +
                       2 * std::max(ffn / tp, 1.0);
  const double seqs = static_cast<double>(b.prefills.size() + b.decode_contexts.size());
  return Bytes(tokens * width * abytes_ + seqs * std::ceil(static_cast<double>(m_.vocab) / tp) * 4);
}

StepCost GpuStepCost::gemm_cost(double rows, double k, double n) const {
  Tally t;
  gemm(t, rows, k, n);
  StepCost c;
  c.time = c.matmul = Nanoseconds(t.gemm_s * 1e9);
  c.energy_by_unit[EnergyUnit::SM] = t.flops * flop_j_ * d_.tp;
  c.energy_by_unit[EnergyUnit::HBM] = t.hbm_bytes * s_.gpu.energy.hbm_per_byte.value() * d_.tp;
  c.energy = Joules(c.energy_by_unit.total());
  return c;
}

// FFN weights of layer l: all of them, or (touched) those of the routed top-k and shared experts.
double GpuStepCost::ffn_params(int64_t l, bool touched) const {
  const double h = static_cast<double>(m_.hidden), k = static_cast<double>(matrices());
  if (!moe_layer(l)) return k * h * static_cast<double>(m_.intermediate);
  const double experts = touched ? std::min<double>(m_.moe.experts, m_.moe.experts_per_token) : m_.moe.experts;
  return k * h * static_cast<double>(m_.moe.expert_intermediate) * (experts + m_.moe.shared_experts) + h * m_.moe.experts;
}

void GpuStepCost::gemm(Tally& t, double rows, double k, double n) const {
  const auto& e = s_.gpu.efficiency;
  const double flops = 2 * rows * k * n;
  const double bytes = k * n * wbytes_ + rows * (k + n) * abytes_;
  const double eff = e.gemm_max * rows / (rows + e.gemm_half_rows);
  t.gemm_s += std::max(flops / (peak_ * eff), bytes / (bw() * e.memory));
  t.flops += flops;
  t.hbm_bytes += bytes;
}

void GpuStepCost::ffn(Tally& t, double rows, int64_t l) const {
  const double h = static_cast<double>(m_.hidden), tp = d_.tp, k = static_cast<double>(matrices());
  if (!moe_layer(l)) {
    const double inter = static_cast<double>(m_.intermediate) / tp;
    gemm(t, rows, h, (k - 1) * inter);  // gate and up fused
    gemm(t, rows, inter, h);
    return;
  }
  // Routed experts: each touched expert's GEMMs on its share of the rows.
  const double touched = std::min<double>(m_.moe.experts, rows * m_.moe.experts_per_token);
  const double per_expert = rows * m_.moe.experts_per_token * m_.moe.capacity_factor / touched;
  const double inter = static_cast<double>(m_.moe.expert_intermediate) / tp;
  for (double x = 0; x < touched + m_.moe.shared_experts; x += 1) {
    const double r = x < touched ? per_expert : rows;
    gemm(t, r, h, (k - 1) * inter);
    gemm(t, r, inter, h);
  }
}

void GpuStepCost::attention(Tally& t, const StepBatch& b) const {
  const auto& e = s_.gpu.efficiency;
  const double heads = static_cast<double>(m_.heads) / d_.tp;
  const double kv_token = 2.0 * static_cast<double>(m_.kv_heads) / static_cast<double>(kv_shards_) * hd_ * kvbytes_;
  // Context (prefill) and generation (decode) attention are separate kernels that run one after
  // the other in an iteration (TensorRT-LLM's attention op: enqueueContext, then enqueueGeneration),
  // so their times add; each is bound by its own FLOPs or KV bytes.
  double prefill_flops = 0, prefill_bytes = 0, decode_flops = 0, decode_bytes = 0;
  for (const auto& p : b.prefills) {
    const double n = static_cast<double>(p.tokens), ctx = static_cast<double>(p.context);
    prefill_flops += 4 * n * (ctx + 0.5 * n) * heads * hd_;  // QK^T and PV, causal
    prefill_bytes += (ctx + n) * kv_token;
  }
  for (int64_t ctx : b.decode_contexts) {
    decode_flops += 4 * static_cast<double>(ctx + 1) * heads * hd_;
    decode_bytes += static_cast<double>(ctx + 1) * kv_token;
  }
  t.attention_s += std::max(prefill_flops / (peak_ * e.attention), prefill_bytes / (bw() * e.memory)) +
                   decode_bytes / (bw() * e.memory);
  t.flops += decode_flops + prefill_flops;
  t.hbm_bytes += prefill_bytes + decode_bytes;
}

void GpuStepCost::other(Tally& t, double bytes) const {
  t.other_s += bytes / (bw() * s_.gpu.efficiency.memory);
  t.hbm_bytes += bytes;
}

void GpuStepCost::all_reduce(Tally& t, double bytes) const {
  const auto& e = s_.gpu.efficiency;
  const double tp = d_.tp, moved = 2 * (tp - 1) / tp * bytes;
  t.collective_s += e.collective_latency.value() * 1e-9 + moved / (s_.gpu.nvlink_bandwidth.value() * 1e9 / 2 * e.nvlink);
  t.nvlink_bytes += moved;
}

std::unique_ptr<IStepCost> make_gpu_step_cost(const ModelDesc& model, const Deployment& deployment,
                                              const hw::GpuSystemSpec& system) {
  return std::make_unique<GpuStepCost>(model, deployment, system);
}

hw::GpuSystemSpec gpu_system_of(const Deployment& d) {
  hw::GpuSystemSpec s = hw::load_gpu_system(d.system);
  return d.clock_scale != 1 ? hw::gpu_at_clock_scale(std::move(s), d.clock_scale) : s;
}

std::unique_ptr<IStepCost> make_gpu_step_cost(const ModelDesc& model, const Deployment& deployment) {
  return make_gpu_step_cost(model, deployment, gpu_system_of(deployment));
}

}  // namespace trnsim::workloads
