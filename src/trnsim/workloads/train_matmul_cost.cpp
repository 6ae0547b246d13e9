#include "trnsim/workloads/train_matmul_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "trnsim/core/run.h"
#include "trnsim/hw/spec_json.h"
#include "trnsim/kernels/matmul.h"
#include "trnsim/workloads/llm_cost_cache.h"

namespace trnsim::workloads {
namespace {

int64_t round_up(int64_t x, int64_t q) { return std::max<int64_t>(q, (x + q - 1) / q * q); }
constexpr int64_t kMeasuredRows = 2048;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

TrainMatmulCosts::TrainMatmulCosts(const hw::ChipSpec& chip, int cores, const std::string& dtype)
    : chip_(chip), cores_(std::max(1, cores)) {
  dtype_ = dtype == "fp8" && chip.supports(numerics::DType::F8E4M3) ? numerics::DType::F8E4M3 : numerics::DType::BF16;
  const std::string scope = fmt::format("train-matmul-{}-{:016x}-{}", chip.name,
                                        std::hash<std::string>{}(hw::to_json(chip).dump()), numerics::name(dtype_));
  cache_ = std::make_unique<CostCache>(scope, true);
}

TrainMatmulCosts::~TrainMatmulCosts() = default;

double TrainMatmulCosts::measure(int64_t m, int64_t k, int64_t n) {
  const std::string key = fmt::format("optimized-matmul:m={},k={},n={}", m, k, n);
  if (auto v = cache_->get(key)) return *v;
  kernels::MatmulShape s{m, k, n, dtype_, numerics::DType::BF16};
  const isa::Program p = kernels::matmul_program(chip_, s, kernels::MatmulVariant::Optimized);
  core::RunOptions ro;
  ro.mode = core::Mode::Timing;
  ro.record_instructions = false;
  ro.validate = false;
  const double t = core::run(p, chip_, {}, ro).total.ms() * 1e-3;
  ++simulations_;
  cache_->put(key, t);
  return t;
}

double TrainMatmulCosts::seconds(int64_t m, int64_t k, int64_t n) {
  if (m <= 0 || k <= 0 || n <= 0) return 0.0;
  const int64_t mr = round_up(m, 128), kr = round_up(k, 128);
  const int64_t nr = round_up(ceil_div(n, cores_), 512);  // the physical cores split the columns
  const int64_t measured = std::min(mr, kMeasuredRows);
  return measure(measured, kr, nr) * double(mr) / double(measured);
}

TrainMatmuls train_matmuls(const ModelDesc& m, int64_t t, int tp, TrainMatmulCosts& c) {
  const int64_t h = m.hidden;
  TrainMatmuls out;
  double attn = 0;
  if (m.mla.enabled) {
    const auto& a = m.mla;
    const int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    attn += a.q_lora_rank > 0 ? c.seconds(t, h, a.q_lora_rank) + c.seconds(t, a.q_lora_rank, ceil_div(m.heads * qk, tp))
                              : c.seconds(t, h, ceil_div(m.heads * qk, tp));
    attn += c.seconds(t, h, a.kv_lora_rank + a.qk_rope_head_dim);
    attn += c.seconds(t, a.kv_lora_rank, ceil_div(m.heads * (a.qk_nope_head_dim + a.v_head_dim), tp));
    attn += c.seconds(t, ceil_div(m.heads * a.v_head_dim, tp), h);
  } else {
    const int64_t q = ceil_div(m.heads, tp) * m.head_dim, kv = ceil_div(m.kv_heads, tp) * m.head_dim;
    attn += c.seconds(t, h, q + 2 * kv) + c.seconds(t, q, h);
  }
  const int64_t ffn = ceil_div(m.intermediate, tp);
  out.dense_layer = attn + c.seconds(t, h, (m.gated_ffn ? 2 : 1) * ffn) + c.seconds(t, ffn, h);
  out.moe_layer = out.dense_layer;
  if (m.moe.experts > 0) {
    // Balanced routing: the rank's share of the t x top-k expert rows through one expert's
    // (tp-split) FFN; shared experts see every token; the router is a small matmul.
    const int64_t ie = ceil_div(m.moe.expert_intermediate, tp);
    const int64_t rows = t * m.moe.experts_per_token;
    double moe = attn + c.seconds(t, h, m.moe.experts) + c.seconds(rows, h, 2 * ie) + c.seconds(rows, ie, h);
    if (m.moe.shared_experts > 0) {
      const int64_t is = ie * m.moe.shared_experts;
      moe += c.seconds(t, h, 2 * is) + c.seconds(t, is, h);
    }
    out.moe_layer = moe;
  }
  out.head = c.seconds(t, h, ceil_div(m.vocab, tp));  // the loss needs every token's logits
  return out;
}

}  // namespace trnsim::workloads
