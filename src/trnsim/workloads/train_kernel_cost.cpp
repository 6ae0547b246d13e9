#include "trnsim/workloads/train_kernel_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "trnsim/core/run.h"
#include "trnsim/hw/spec_json.h"
#include "trnsim/kernels/matmul.h"
#include "trnsim/kernels/registry.h"
#include "trnsim/workloads/llm_cost_cache.h"

namespace trnsim::workloads {
namespace {

int64_t round_up(int64_t x, int64_t q) { return std::max<int64_t>(q, (x + q - 1) / q * q); }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
constexpr int64_t kMeasuredRows = 2048, kMeasuredHeads = 8;

NodeCost run_timing(const isa::Program& p, const hw::ChipSpec& chip) {
  core::RunOptions ro;
  ro.mode = core::Mode::Timing;
  ro.record_instructions = false;
  ro.validate = false;
  const core::RunResult r = core::run(p, chip, {}, ro);
  return {r.total.ms() * 1e-3, UnitEnergy::dynamic_of(r.energy_by_unit())};
}

// Cache line values: seconds, then every unit's dynamic energy but static.
constexpr size_t kCachedValues = kEnergyUnits;

}  // namespace

TrainKernelCosts::TrainKernelCosts(const hw::ChipSpec& chip, int cores, const std::string& dtype)
    : chip_(chip), cores_(std::max(1, cores)) {
  dtype_ = dtype == "fp8" && chip.supports(numerics::DType::F8E4M3) ? "fp8" : "bf16";
  const std::string scope =
      fmt::format("train-kernels-{}-{:016x}-{}", chip.name, std::hash<std::string>{}(hw::to_json(chip).dump()), dtype_);
  cache_ = std::make_unique<CostCache>(scope + (chip.energy.clock_scale == 1 ? "" : fmt::format("-cs{:.17g}", chip.energy.clock_scale)), true);
}

TrainKernelCosts::~TrainKernelCosts() = default;

NodeCost TrainKernelCosts::measure(const std::string& kernel, const std::map<std::string, std::string>& args,
                                   const std::string& dtype) {
  std::string key = kernel + ":" + dtype;
  for (const auto& [k, v] : args) key += "," + k + "=" + v;
  // time-only lines: measured again
  const std::vector<double> v = cache_->get_or_measure(key, kCachedValues, [=, this] {  // by value: see cost_plan.h
    NodeCost t;
    if (kernel == "matmul") {
      kernels::MatmulShape s{std::stoll(args.at("m")), std::stoll(args.at("k")), std::stoll(args.at("n")),
                             dtype == "fp8" ? numerics::DType::F8E4M3 : numerics::DType::BF16, numerics::DType::BF16};
      t = run_timing(kernels::matmul_program(chip_, s, kernels::MatmulVariant::Optimized), chip_);
    } else {
      const kernels::KernelDef& def = kernels::find_kernel(kernel);
      t = run_timing(def.build(chip_, kernels::resolve_args(def, args, dtype)), chip_);
    }
    std::vector<double> values{t.s};
    for (size_t i = 1; i < kCachedValues; ++i) values.push_back(t.e.j[i - 1]);
    return values;
  });
  NodeCost t{v[0], {}};
  for (size_t i = 1; i < kCachedValues; ++i) t.e.j[i - 1] = v[i];
  return t;
}

NodeCost TrainKernelCosts::matmul(int64_t m, int64_t k, int64_t n) {
  if (m <= 0 || k <= 0 || n <= 0) return {};
  const int64_t mr = round_up(m, 128), kr = round_up(k, 128);
  const int64_t nr = round_up(ceil_div(n, cores_), 512);  // the physical cores split the columns
  const int64_t rows = std::min(mr, kMeasuredRows);
  const auto s = [](int64_t v) { return std::to_string(v); };
  return measure("matmul", {{"m", s(rows)}, {"k", s(kr)}, {"n", s(nr)}}, dtype_) * double(mr) / double(rows);
}

NodeCost TrainKernelCosts::attention(int64_t heads, int64_t seq, int64_t head_dim, bool causal) {
  if (heads <= 0 || seq <= 0) return {};
  const int64_t per_core = ceil_div(heads, cores_);  // heads are independent: the cores split them
  const int64_t measured = std::min(per_core, kMeasuredHeads);
  const int64_t d = std::min<int64_t>(head_dim, 128);  // the kernel's limit; wider heads scale
  const auto s = [](int64_t v) { return std::to_string(v); };
  const NodeCost t = measure("attention", {{"heads", s(measured)}, {"seq", s(seq)}, {"head-dim", s(d)},
                                         {"causal", causal ? "1" : "0"}}, "bf16");
  return t * double(per_core) / double(measured) * double(head_dim) / double(d);
}

NodeCost TrainKernelCosts::rowwise(const std::string& kernel, int64_t rows, int64_t cols, const std::string& func) {
  if (rows <= 0 || cols <= 0) return {};
  const int64_t per_core = ceil_div(rows, cores_);
  const int64_t measured = std::min(round_up(per_core, 128), kMeasuredRows);
  std::map<std::string, std::string> args = {{"rows", std::to_string(measured)}, {"cols", std::to_string(cols)}};
  if (!func.empty()) args["func"] = func;
  return measure(kernel, args, "bf16") * double(per_core) / double(measured);
}

NodeCost TrainKernelCosts::hbm(double bytes) const {
  NodeCost c{bytes / (chip_.hbm.bandwidth.value() * cores_ / chip_.neuron_cores) * 1e-9, {}};
  c.e[EnergyUnit::HBM] = bytes * chip_.energy.hbm_per_byte.value();
  return c;
}

TrainKernelLayers train_kernel_layers(const ModelDesc& m, int64_t b, int64_t seq, int cp, int tp,
                                      TrainKernelCosts& c) {
  const int64_t h = m.hidden, t = b * (seq / cp);
  const int64_t sp_rows = ceil_div(t, tp);  // sequence parallelism: norms and residuals on t / tp rows
  TrainKernelLayers out;
  TrainKernelPass base;
  // Attention projections.
  if (m.mla.enabled) {
    const auto& a = m.mla;
    const int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    base.matmul += a.q_lora_rank > 0
                       ? c.matmul(t, h, a.q_lora_rank) + c.matmul(t, a.q_lora_rank, ceil_div(m.heads * qk, tp))
                       : c.matmul(t, h, ceil_div(m.heads * qk, tp));
    base.matmul += c.matmul(t, h, a.kv_lora_rank + a.qk_rope_head_dim);
    base.matmul += c.matmul(t, a.kv_lora_rank, ceil_div(m.heads * (a.qk_nope_head_dim + a.v_head_dim), tp));
    base.matmul += c.matmul(t, ceil_div(m.heads * a.v_head_dim, tp), h);
  } else {
    const int64_t q = ceil_div(m.heads, tp) * m.head_dim, kv = ceil_div(m.kv_heads, tp) * m.head_dim;
    base.matmul += c.matmul(t, h, q + 2 * kv) + c.matmul(t, q, h);
  }
  // Flash attention over micro-batch x local heads in one call; with context parallelism a
  // rank's causal share is cp times that of its own S/cp block.
  const int64_t heads = b * ceil_div(m.heads, tp);
  const int64_t hd = m.mla.enabled ? m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim : m.head_dim;
  base.attention = c.attention(heads, seq / cp, hd, !m.encoder) * (m.encoder ? 1.0 : double(cp));
  // Norms (LayerNorm for encoders, else RMSNorm), residual adds (read 2, write 1), RoPE on q and
  // k (read q/k, cos, sin, write), as bf16 streams.
  const std::string norm = m.encoder ? "layernorm" : "rmsnorm";
  base.other = c.rowwise(norm, sp_rows, h) * 2 + c.hbm(3.0 * sp_rows * h * 2) * 2;
  if (!m.encoder) base.other += c.hbm(4.0 * t * (ceil_div(m.heads, tp) + ceil_div(m.kv_heads, tp)) * hd * 2);
  // FFN: activation on ScalarE, and the gate product of a gated FFN (read 2, write 1).
  auto ffn_other = [&](int64_t rows, int64_t width) {
    return c.rowwise("activation", rows, width, m.gated_ffn ? "silu" : "gelu") +
           (m.gated_ffn ? c.hbm(3.0 * rows * width * 2) : NodeCost{});
  };
  const int64_t ffn = ceil_div(m.intermediate, tp);
  out.dense_layer = base;
  out.dense_layer.matmul += c.matmul(t, h, (m.gated_ffn ? 2 : 1) * ffn) + c.matmul(t, ffn, h);
  out.dense_layer.other += ffn_other(t, ffn);
  out.moe_layer = out.dense_layer;
  if (m.moe.experts > 0) {
    // Balanced routing: the rank's t x top-k expert rows through one expert's (tp-split) FFN;
    // shared experts see every token; the router is a small matmul.
    const int64_t ie = ceil_div(m.moe.expert_intermediate, tp), rows = t * m.moe.experts_per_token;
    out.moe_layer = base;
    out.moe_layer.matmul += c.matmul(t, h, m.moe.experts) + c.matmul(rows, h, 2 * ie) + c.matmul(rows, ie, h);
    out.moe_layer.other += ffn_other(rows, ie);
    if (m.moe.shared_experts > 0) {
      const int64_t is = ie * m.moe.shared_experts;
      out.moe_layer.matmul += c.matmul(t, h, 2 * is) + c.matmul(t, is, h);
      out.moe_layer.other += ffn_other(t, is);
    }
  }
  // The loss needs every token's logits: the head over all t tokens and a softmax over them.
  const int64_t vocab = ceil_div(m.vocab, tp);
  out.ends.matmul = c.matmul(t, h, vocab);
  out.ends.other = c.rowwise("softmax", t, vocab) + c.rowwise(norm, sp_rows, h);
  return out;
}

}  // namespace trnsim::workloads
