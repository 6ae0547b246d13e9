#include "trnsim/workloads/llm_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "trnsim/common/error.h"
#include "trnsim/hw/energy_loader.h"
#include "trnsim/hw/gpu_spec.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/workloads/gpu_step_cost.h"

namespace trnsim::workloads {
namespace {

using collectives::Op;
constexpr int64_t kMaxKernelHeadDim = 128;  // the flash kernel's head_dim limit

int64_t tokens_of(const StepBatch& b) {
  int64_t m = static_cast<int64_t>(b.decode_contexts.size());
  for (const auto& p : b.prefills) m += p.tokens;
  return m;
}

compiler::DTypePolicy policy_of(const std::string& dtype) {
  if (dtype == "bf16") return compiler::DTypePolicy::BF16;
  if (dtype == "fp8") return compiler::DTypePolicy::FP8;
  throw ConfigError(fmt::format("--dtype: '{}' is not one of bf16, fp8", dtype));
}

}  // namespace

bool is_trainium_system(const hw::SystemSpec& s) {
  const std::string& n = s.chip.name;
  return n.starts_with("trn") || n.starts_with("inf");
}

TrainiumStepCost::TrainiumStepCost(const ModelDesc& model, const Deployment& d, StepCostOptions options)
    : model_(model), deployment_(d), system_(hw::load_system(d.system)) {
  if (!is_trainium_system(system_))
    throw UnsupportedError(fmt::format("system '{}' (chip {}) is not a Trainium system; the LLM cost model covers trn*/inf* chips",
                                       system_.name, system_.chip.name));
  layout_ = make_layout(model_, d, system_);
  if (d.clock_scale != 1) system_.chip = hw::at_clock_scale(system_.chip, d.clock_scale);
  NodeCostOptions no;
  no.cores = layout_.lnc;
  no.policy = policy_of(d.dtype);
  no.use_disk_cache = options.use_disk_cache;
  no.interpolate = options.interpolate;
  nodes_ = std::make_unique<NodeCosts>(system_.chip, no);
  if (layout_.weight_bytes == 1 && no.policy == compiler::DTypePolicy::BF16) {
    // int8/fp8 weights, bf16 compute (transformers-neuronx dequantises on chip): HBM moves one
    // byte per weight. Timed under the fp8 policy (1-byte matmul operands); on Trn1/Inf2 its
    // TensorE rate equals bf16's, so only the bytes change (Trn2+: see docs/llm.md).
    NodeCostOptions wo = no;
    wo.policy = compiler::DTypePolicy::FP8;
    weight_nodes_ = std::make_unique<NodeCosts>(system_.chip, wo);
  }
  collectives_ = std::make_unique<CollectiveCosts>(system_, layout_.lcores_per_chip, options.use_disk_cache);
  const double per_core = weight_bytes_per_core().value(), hbm = hbm_bytes_per_core().value();
  if (per_core > hbm) {
    const int per_chip = std::min(layout_.tp * layout_.pp, layout_.lcores_per_chip);
    throw ShapeError(fmt::format("{} {} needs {:.0f} GiB per chip for weights at tp {}{}; {} has {:.0f}", model_.name, d.weights,
                                 per_core * per_chip / (1 << 30), layout_.tp,
                                 layout_.pp > 1 ? fmt::format(" pp {}", layout_.pp) : "", system_.chip.name,
                                 system_.chip.hbm.capacity.value() / (1 << 30)));
  }
}

TrainiumStepCost::~TrainiumStepCost() = default;

int TrainiumStepCost::cores() const { return layout_.tp * layout_.pp; }
int TrainiumStepCost::chips() const { return layout_.chips; }

Watts TrainiumStepCost::idle_power() const {
  const auto& e = system_.chip.energy;
  return Watts(e.modelled ? e.static_power.value() * e.voltage_scale * layout_.chips : 0.0);
}

Watts TrainiumStepCost::host_power() const {
  return Watts(system_.energy.host_power_per_instance.value() * layout_.chips / std::max(1, system_.chips_per_instance));
}

CostNode TrainiumStepCost::compute_node(std::string name, CostCategory category, const NodeCost& c) const {
  return {std::move(name), category, c.s, 1, c.e * static_cast<double>(layout_.tp)};
}

CostNode TrainiumStepCost::fabric_node(std::string name, const NodeCost& c, double groups) const {
  return {std::move(name), CostCategory::Collective, c.s, 1, c.e * groups};
}

Bytes TrainiumStepCost::hbm_bytes_per_core() const {
  return Bytes(system_.chip.hbm.capacity.value() / layout_.lcores_per_chip);
}

Bytes TrainiumStepCost::weight_bytes_per_core() const {
  int64_t w = 0;
  const int64_t first = 0, last = std::min(model_.layers, layout_.layers_per_stage);
  for (int64_t l = first; l < last; ++l) w += layout_.layer_weights(model_, l);
  // Every MoE stage but the first holds MoE layers only: count the largest stage.
  if (layout_.pp > 1 && model_.moe.first_dense_layers > 0) {
    int64_t alt = 0;
    for (int64_t l = model_.layers - layout_.layers_per_stage; l < model_.layers; ++l) alt += layout_.layer_weights(model_, l);
    w = std::max(w, alt);
  }
  const int64_t table = layout_.vocab * model_.hidden;  // embedding and LM head, vocab-split
  w += layout_.pp == 1 ? (model_.encoder ? table : 2 * table) : table;
  return Bytes(static_cast<double>(w) * layout_.weight_bytes);
}

Bytes TrainiumStepCost::kv_bytes_per_token_per_core() const {
  return Bytes(static_cast<double>(layout_.layers_per_stage * layout_.layer_kv(model_) * layout_.kv_bytes));
}

Bytes TrainiumStepCost::activation_bytes_per_core(const StepBatch& b) const {
  const int64_t m = tokens_of(b);
  const int64_t width = 3 * model_.hidden + (layout_.q_heads + 2 * layout_.kv_heads) * model_.head_dim +
                        2 * std::max(layout_.ffn, layout_.expert_ffn + layout_.shared_ffn);
  const int64_t heads = static_cast<int64_t>(b.prefills.size() + b.decode_contexts.size());
  return Bytes(static_cast<double>(m * width * 2 + heads * layout_.vocab * 4));
}

void TrainiumStepCost::attention_nodes(const StepBatch& b, int64_t layer, int64_t m, std::vector<CostNode>& out) const {
  const auto& L = layout_;
  const int64_t hd = model_.head_dim;
  NodeCosts& nc = *nodes_;
  NodeCosts& wm = weight_matmuls();
  const int64_t window = model_.layer_is_sliding(layer) ? model_.sliding_window : INT64_MAX;
  // MLA runs on the kernel at head_dim 128, scaled by the widths it multiplies (see docs/llm.md).
  const bool mla = model_.mla.enabled;
  const int64_t kd = std::min(hd, kMaxKernelHeadDim);
  const double prefill_scale = mla ? (hd + model_.mla.v_head_dim) / (2.0 * kMaxKernelHeadDim)
                                   : static_cast<double>(hd) / static_cast<double>(kd);
  const double decode_scale =
      mla ? (2.0 * model_.mla.kv_lora_rank + model_.mla.qk_rope_head_dim) / (2.0 * kMaxKernelHeadDim) : prefill_scale;

  if (mla) {
    const auto& a = model_.mla;
    const int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    if (a.q_lora_rank > 0) {
      out.push_back(compute_node("q_a_proj", CostCategory::Matmul, wm.matmul(m, model_.hidden, a.q_lora_rank)));
      out.push_back(compute_node("q_b_proj", CostCategory::Matmul, wm.matmul(m, a.q_lora_rank, L.q_heads * qk)));
    } else {
      out.push_back(compute_node("q_proj", CostCategory::Matmul, wm.matmul(m, model_.hidden, L.q_heads * qk)));
    }
    out.push_back(compute_node("kv_a_proj", CostCategory::Matmul, wm.matmul(m, model_.hidden, a.kv_lora_rank + a.qk_rope_head_dim)));
    out.push_back(compute_node("kv_b_proj", CostCategory::Matmul,
                               wm.matmul(m, a.kv_lora_rank, L.q_heads * (a.qk_nope_head_dim + a.v_head_dim))));
  } else {
    out.push_back(compute_node("qkv_proj", CostCategory::Matmul, wm.matmul(m, model_.hidden, (L.q_heads + 2 * L.kv_heads) * hd)));
  }
  NodeCost prefill;
  for (const auto& p : b.prefills) {
    const int64_t t = p.tokens;
    prefill = prefill + (t <= window ? nc.prefill_attention(L.q_heads, t, kd)
                                     : nc.prefill_attention(L.q_heads, window, kd) * static_cast<double>(t) / window);
    if (p.context > 0) prefill = prefill + nc.cross_attention(L.q_heads, t, std::min(p.context, window), kd);
  }
  if (!b.prefills.empty()) out.push_back(compute_node("attention (prefill)", CostCategory::Attention, prefill * prefill_scale));
  if (!b.decode_contexts.empty()) {
    // Decode: the query heads that share a KV head are the rows of one kernel head (GQA), as
    // Neuron's decode kernels stack them; MLA attends to the one shared latent. The batch's
    // sequences are heads of one kernel at their mean KV length (ragged work, one launch).
    const int64_t heads = mla ? 1 : L.kv_heads;
    const int64_t rows = mla ? L.q_heads : std::max<int64_t>(1, L.q_heads / L.kv_heads);
    const int64_t n = static_cast<int64_t>(b.decode_contexts.size());
    int64_t keys = 0;
    for (int64_t ctx : b.decode_contexts) keys += std::min(ctx + 1, window);
    const NodeCost decode = nc.decode_attention(heads * n, rows, std::max<int64_t>(1, (keys + n / 2) / n), kd);
    out.push_back(compute_node("attention (decode)", CostCategory::Attention, decode * decode_scale));
  }
  out.push_back(compute_node("o_proj", CostCategory::Matmul, wm.matmul(m, model_.v_width() / model_.heads * L.q_heads, model_.hidden)));
  tp_reduction(m, "attention", out);
}

void TrainiumStepCost::tp_reduction(int64_t m, const char* after, std::vector<CostNode>& out) const {
  const int64_t bytes = m * model_.hidden * 2;
  if (!deployment_.sequence_parallel) {
    out.push_back(fabric_node(fmt::format("tp all-reduce ({})", after), collectives_->cost(Op::AllReduce, layout_.tp, bytes)));
    return;
  }
  // Sequence parallel: the row-parallel output is reduce-scattered over the tokens, and the
  // next column-parallel matmul all-gathers them back (the same bytes, two collectives).
  out.push_back(fabric_node(fmt::format("tp reduce-scatter + all-gather ({})", after),
                            collectives_->cost(Op::ReduceScatter, layout_.tp, bytes) +
                                collectives_->cost(Op::AllGather, layout_.tp, bytes)));
}

void TrainiumStepCost::ffn_nodes(int64_t layer, int64_t m, std::vector<CostNode>& out) const {
  const auto& L = layout_;
  const int64_t h = model_.hidden;
  NodeCosts& wm = weight_matmuls();
  if (!model_.layer_is_moe(layer)) {
    out.push_back(compute_node(model_.gated_ffn ? "gate_up_proj" : "fc1", CostCategory::Matmul,
                               wm.matmul(m, h, (model_.gated_ffn ? 2 : 1) * L.ffn)));
    out.push_back(compute_node(model_.gated_ffn ? "down_proj" : "fc2", CostCategory::Matmul, wm.matmul(m, L.ffn, h)));
  } else {
    const auto& moe = model_.moe;
    const double e = moe.experts, k = moe.experts_per_token;
    out.push_back(compute_node("router", CostCategory::Matmul, wm.matmul(m, h, moe.experts)));
    // Expected routing: an expert gets at least one of m tokens with p = 1 - (1 - k/E)^m; the
    // active ones share the m k assignments, padded to the capacity factor.
    const double p = 1.0 - std::pow(1.0 - k / e, static_cast<double>(m));
    const double active = static_cast<double>(L.experts) * p;
    const int64_t tokens = static_cast<int64_t>(std::ceil(moe.capacity_factor * m * k / (e * p) - 1e-9));
    const NodeCost one = wm.matmul(tokens, h, 2 * L.expert_ffn) + wm.matmul(tokens, L.expert_ffn, h);
    out.push_back(compute_node(fmt::format("experts ({:.1f} active x {} tokens)", active, tokens), CostCategory::Matmul, one * active));
    if (L.shared_ffn > 0)
      out.push_back(compute_node("shared experts", CostCategory::Matmul,
                                 wm.matmul(m, h, 2 * L.shared_ffn) + wm.matmul(m, L.shared_ffn, h)));
    if (L.ep > 1)  // every EP group of the TP ranks exchanges its tokens
      out.push_back(fabric_node("ep all-to-all (dispatch + combine)",
                                collectives_->cost(Op::AllToAll, L.ep, static_cast<int64_t>(m * k) * h * 2) * 2.0,
                                static_cast<double>(layout_.tp) / L.ep));
  }
  tp_reduction(m, "ffn", out);
}

void TrainiumStepCost::layer_nodes(const StepBatch& b, int64_t layer, int64_t repeat, std::vector<CostNode>& out) const {
  const size_t first = out.size();
  const int64_t m = tokens_of(b);
  attention_nodes(b, layer, m, out);
  ffn_nodes(layer, m, out);
  const int64_t ffn_width = model_.layer_is_moe(layer)
                                ? layout_.expert_ffn * model_.moe.experts_per_token + layout_.shared_ffn
                                : layout_.ffn;
  NodeCost pointwise = nodes_->pointwise(m, model_.hidden, ffn_width, (layout_.q_heads + layout_.kv_heads) * model_.head_dim);
  if (deployment_.sequence_parallel && layout_.tp > 1) {  // norms and residuals on this rank's tokens only
    const NodeCost sp = pointwise - nodes_->norms(m, model_.hidden) + nodes_->norms((m + layout_.tp - 1) / layout_.tp, model_.hidden);
    pointwise = sp.s > 0 ? sp : NodeCost{};
  }
  out.push_back(compute_node("norms, rope, swiglu, residuals", CostCategory::Other, pointwise));
  const std::string kind = fmt::format("{}{}", model_.layer_is_moe(layer) ? "moe" : "dense",
                                       model_.layer_is_sliding(layer) ? ", sliding" : "");
  for (size_t i = first; i < out.size(); ++i) {
    out[i].name = fmt::format("layer[{}] {}", kind, out[i].name);
    out[i].repeat = repeat;
  }
}

std::vector<CostNode> TrainiumStepCost::nodes(const StepBatch& b) const {
  std::vector<CostNode> out;
  const int64_t m = tokens_of(b);
  if (m == 0) return out;
  // Layers of one kind (dense / MoE, full / sliding) cost the same: one representative each.
  std::map<std::pair<bool, bool>, std::pair<int64_t, int64_t>> kinds;  // -> (first layer, count)
  for (int64_t l = 0; l < model_.layers; ++l) {
    auto& k = kinds[{model_.layer_is_moe(l), model_.layer_is_sliding(l)}];
    if (k.second++ == 0) k.first = l;
  }
  for (const auto& [kind, v] : kinds) layer_nodes(b, v.first, v.second, out);
  const int64_t heads = static_cast<int64_t>(b.prefills.size() + b.decode_contexts.size());
  if (!model_.encoder) {
    out.push_back(compute_node("lm_head", CostCategory::Matmul, weight_matmuls().matmul(heads, model_.hidden, layout_.vocab)));
    out.push_back(fabric_node("tp all-gather (logits)",
                              collectives_->cost(Op::AllGather, layout_.tp, heads * layout_.vocab * layout_.tp * 2)));
  }
  if (layout_.pp > 1) {  // every TP rank of a stage sends its copy of the activations
    out.push_back(fabric_node("pp send/recv", collectives_->cost(Op::Permute, 2, m * model_.hidden * 2), layout_.tp));
    out.back().repeat = layout_.pp - 1;
  }
  return out;
}

StepCost TrainiumStepCost::step(const StepBatch& b) const {
  StepCost c;
  double t[4] = {0, 0, 0, 0};
  for (const auto& n : nodes(b)) {
    t[static_cast<int>(n.category)] += n.seconds * static_cast<double>(n.repeat);
    c.energy_by_unit += n.energy * static_cast<double>(n.repeat);
  }
  c.matmul = Nanoseconds(t[0] * 1e9);
  c.attention = Nanoseconds(t[1] * 1e9);
  c.collective = Nanoseconds(t[2] * 1e9);
  c.other = Nanoseconds(t[3] * 1e9);
  c.time = Nanoseconds((t[0] + t[1] + t[2] + t[3]) * 1e9);
  // The work's dynamic energy, and every chip's static power for the whole step (a pipeline
  // stage's chips idle while the others run).
  c.energy_by_unit[EnergyUnit::Static] = idle_power().value() * (t[0] + t[1] + t[2] + t[3]);
  c.energy = Joules(c.energy_by_unit.total());
  return c;
}

std::unique_ptr<IStepCost> make_step_cost(const ModelDesc& model, const Deployment& deployment) {
  // A GPU system takes the roofline baseline behind the same interface (gpu_step_cost.h).
  // --clock-scale / --power-cap move the GPU's SM clock (gpu_system_of: hw::gpu_at_clock_scale).
  if (hw::is_gpu_system(deployment.system)) return make_gpu_step_cost(model, deployment);
  return std::make_unique<TrainiumStepCost>(model, deployment);
}

}  // namespace trnsim::workloads
