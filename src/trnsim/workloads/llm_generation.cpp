#include "trnsim/workloads/llm_generation.h"

#include <fmt/format.h>

#include <algorithm>

#include "trnsim/common/error.h"
#include "trnsim/workloads/cost_plan.h"
#include "trnsim/workloads/gpu_step_cost.h"

namespace trnsim::workloads {
namespace {

// Decode steps evaluated exactly up to this many; beyond, evenly spaced contexts (the step time
// is piecewise linear in the context, so the mean of the samples is the mean of the steps).
constexpr int64_t kMaxDecodeSamples = 256;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

const char* category_name(CostCategory c) {
  switch (c) {
    case CostCategory::Matmul: return "matmul";
    case CostCategory::Attention: return "attention";
    case CostCategory::Collective: return "collective";
    case CostCategory::Other: return "other";
  }
  return "other";
}

// The two step-cost models a generation runs on: Trainium's (pipeline stages, per-node
// breakdown, timing-mode simulations) and the GPU baseline's (tensor parallel only).
const TrainiumStepCost* trainium(const IStepCost& c) { return dynamic_cast<const TrainiumStepCost*>(&c); }
const GpuStepCost& gpu(const IStepCost& c) {
  if (const auto* g = dynamic_cast<const GpuStepCost*>(&c)) return *g;
  throw Error("llm: a generation runs on the Trainium or the GPU step-cost model");
}
int pipeline_stages(const IStepCost& c) { return trainium(c) ? trainium(c)->layout().pp : 1; }
Bytes activation_bytes(const IStepCost& c, const StepBatch& b) {
  return trainium(c) ? trainium(c)->activation_bytes_per_core(b) : gpu(c).activation_bytes_per_core(b);
}
std::vector<CostNode> nodes_of(const IStepCost& c, const StepBatch& b) {
  return trainium(c) ? trainium(c)->nodes(b) : std::vector<CostNode>{};
}
int simulations(const IStepCost& c) { return trainium(c) ? trainium(c)->node_costs().simulations() : 0; }
double simulation_wall_s(const IStepCost& c) { return trainium(c) ? trainium(c)->node_costs().simulation_wall_s() : 0; }

StepBatch decode_batch(int64_t batch, int64_t context) {
  StepBatch b;
  b.decode_contexts.assign(static_cast<size_t>(batch), context);
  return b;
}

// With pp > 1 the batch runs as `mb` micro-batches through the stages (GPipe-style fill and
// drain): (mb + pp - 1) stage times of one micro-batch, each stage a 1/pp share of its step.
// Energy: mb micro-batches' work, and the chips' static power over that time.
StepCost pipelined(const IStepCost& cost, const StepBatch& micro, int64_t mb) {
  StepCost c = cost.step(micro);
  const int pp = pipeline_stages(cost);
  const double f = static_cast<double>(mb + pp - 1) / pp;
  for (Nanoseconds* t : {&c.time, &c.matmul, &c.attention, &c.collective, &c.other}) *t = Nanoseconds(t->value() * f);
  c.energy_by_unit *= static_cast<double>(mb);
  c.energy_by_unit[EnergyUnit::Static] = cost.idle_power().value() * to_seconds(c.time);
  c.energy = Joules(c.energy_by_unit.total());
  return c;
}

double power_w(const StepCost& c) { return c.time.value() > 0 ? c.energy.value() / to_seconds(c.time) : 0.0; }

void check_memory(const IStepCost& c, const GenerationResult& g) {
  const double need = g.weight_bytes_per_core + g.kv_bytes_per_core + g.activation_bytes_per_core;
  if (need <= g.hbm_bytes_per_core) return;
  if (!trainium(c)) {
    const GpuStepCost& cost = gpu(c);
    throw ShapeError(fmt::format(
        "{} needs {:.1f} GB per GPU at tp {} (weights {:.1f}, KV cache {:.1f}, activations {:.1f}); an {} has {:.1f} GB",
        cost.model().name, need / 1e9, cost.deployment().tp, g.weight_bytes_per_core / 1e9, g.kv_bytes_per_core / 1e9,
        g.activation_bytes_per_core / 1e9, cost.system().gpu.display_name, g.hbm_bytes_per_core / 1e9));
  }
  const TrainiumStepCost& cost = *trainium(c);
  const auto& l = cost.layout();
  throw ShapeError(fmt::format(
      "{} needs {:.1f} GiB per logical core at tp {} (weights {:.1f}, KV cache {:.1f}, activations {:.1f}); a {} "
      "logical core (lnc {}) has {:.1f}",
      cost.model().name, need / kGiB, l.tp, g.weight_bytes_per_core / kGiB, g.kv_bytes_per_core / kGiB,
      g.activation_bytes_per_core / kGiB, cost.system().chip.name, l.lnc, g.hbm_bytes_per_core / kGiB));
}

}  // namespace

int64_t decode_keys(KvBuckets b, int64_t context, int64_t seq_len) {
  return bucket_keys(b, context + 1, seq_len);  // the cache and the new token
}

int64_t bucket_keys(KvBuckets b, int64_t keys, int64_t seq_len) {
  if (b == KvBuckets::Exact) return keys;
  if (b == KvBuckets::Compiled) return std::max(keys, seq_len);
  int64_t bucket = 128;
  while (bucket < keys) bucket *= 2;
  return std::max(keys, std::min(bucket, seq_len));
}

KvBuckets parse_kv_buckets(const std::string& name) {
  if (name == "compiled") return KvBuckets::Compiled;
  if (name == "pow2") return KvBuckets::Pow2;
  if (name == "exact") return KvBuckets::Exact;
  throw ConfigError(fmt::format("--kv-buckets '{}': expected compiled, pow2 or exact", name));
}

const char* kv_buckets_name(KvBuckets b) {
  return b == KvBuckets::Compiled ? "compiled" : b == KvBuckets::Pow2 ? "pow2" : "exact";
}

namespace {

// The longest sequence and the largest batch a generation is timed for (2^31: far past any
// model's context). Beyond it input + output and the KV bytes would overflow, and --input
// 2^63 - 1 ran for minutes instead of being refused.
constexpr int64_t kMaxTokens = int64_t{1} << 31;
// The largest batch: a prefill holds one entry per sequence (--batch 2^31 was a bad_alloc).
constexpr int64_t kMaxBatch = int64_t{1} << 20;

void check_request(const GenerationRequest& r) {
  const auto in_range = [](const char* flag, int64_t v, int64_t lo, int64_t hi = kMaxTokens) {
    if (v < lo || v > hi) throw ConfigError(fmt::format("{} {}: expected {} to {}", flag, v, lo, hi));
  };
  in_range("--batch", r.batch, 1, kMaxBatch);
  in_range("--input", r.input, 1);
  in_range("--output", r.output, 1);
  in_range("--seq-len", r.seq_len, 0);  // 0: input + output
  in_range("--micro-batches", r.micro_batches, 0, kMaxBatch);  // 0: min(batch, pp)
  if (r.input + r.output > kMaxTokens)
    throw ConfigError(fmt::format("--input + --output = {}: expected at most {} tokens", r.input + r.output, kMaxTokens));
}

GenerationResult generation_pass(const IStepCost& cost, const GenerationRequest& r) {
  check_request(r);
  const int64_t seq_len = r.seq_len > 0 ? r.seq_len : r.input + r.output;
  if (seq_len < r.input + r.output)
    throw ConfigError(fmt::format("--seq-len {} is shorter than --input + --output ({})", seq_len, r.input + r.output));
  GenerationResult g;
  const int pp = pipeline_stages(cost);
  if (pp == 1 && r.micro_batches > 1)  // it was ignored without a word
    throw ConfigError(fmt::format("--micro-batches {} needs --pp > 1 (one stage has no micro-batches)", r.micro_batches));
  g.micro_batches = pp == 1 ? 1 : r.micro_batches > 0 ? std::min(r.micro_batches, r.batch) : std::min<int64_t>(r.batch, pp);
  const int64_t micro = (r.batch + g.micro_batches - 1) / g.micro_batches;  // sequences per micro-batch
  StepBatch prefill;
  // The prefill attends over its bucket too: its prompt causally, the rest of the bucket (masked
  // cache positions) as cached context.
  const PrefillChunk chunk{r.input, bucket_keys(r.kv_buckets, r.input, seq_len) - r.input};
  prefill.prefills.assign(static_cast<size_t>(r.batch), chunk);
  g.weight_bytes_per_core = cost.weight_bytes_per_core().value();
  g.kv_bytes_per_core = cost.kv_bytes_per_token_per_core().value() * static_cast<double>(r.batch * seq_len);
  g.activation_bytes_per_core = activation_bytes(cost, prefill).value();
  g.hbm_bytes_per_core = cost.hbm_bytes_per_core().value();
  check_memory(cost, g);
  const int sims0 = simulations(cost);
  const double wall0 = simulation_wall_s(cost);

  StepBatch micro_prefill;
  micro_prefill.prefills.assign(static_cast<size_t>(micro), chunk);
  g.prefill = pipelined(cost, micro_prefill, g.micro_batches);
  g.energy = g.prefill.energy_by_unit;
  g.peak_power_w = power_w(g.prefill);
  g.prefill_nodes = nodes_of(cost, micro_prefill);
  g.ttft_s = to_seconds(g.prefill.time);
  const int64_t steps = r.output - 1;  // the prefill produced the first token
  if (steps > 0) {
    const int64_t samples = std::min(steps, kMaxDecodeSamples);
    double sum[5] = {0, 0, 0, 0, 0};
    UnitEnergy energy_sum;
    for (int64_t i = 0; i < samples; ++i) {
      const int64_t step = samples == steps ? i : (samples == 1 ? 0 : i * (steps - 1) / (samples - 1));
      // The cost model adds the new token to the context: pass the bucket's keys minus one.
      const int64_t context = decode_keys(r.kv_buckets, r.input + step, seq_len) - 1;
      const StepCost c = pipelined(cost, decode_batch(micro, context), g.micro_batches);
      sum[0] += c.time.value(), sum[1] += c.matmul.value(), sum[2] += c.attention.value();
      sum[3] += c.collective.value(), sum[4] += c.other.value();
      energy_sum += c.energy_by_unit;
      g.peak_power_w = std::max(g.peak_power_w, power_w(c));
    }
    const double n = static_cast<double>(samples);
    g.decode_mean.time = Nanoseconds(sum[0] / n);
    g.decode_mean.matmul = Nanoseconds(sum[1] / n);
    g.decode_mean.attention = Nanoseconds(sum[2] / n);
    g.decode_mean.collective = Nanoseconds(sum[3] / n);
    g.decode_mean.other = Nanoseconds(sum[4] / n);
    g.decode_mean.energy_by_unit = energy_sum * (1.0 / n);
    g.decode_mean.energy = Joules(g.decode_mean.energy_by_unit.total());
    g.energy += g.decode_mean.energy_by_unit * static_cast<double>(steps);
    g.decode_steps_evaluated = static_cast<int>(samples);
    g.decode_nodes = nodes_of(cost, decode_batch(micro, decode_keys(r.kv_buckets, r.input, seq_len) - 1));
  }
  g.tpot_s = to_seconds(g.decode_mean.time);
  g.e2e_s = g.ttft_s + static_cast<double>(steps) * g.tpot_s;
  g.output_tokens_per_s = static_cast<double>(r.batch * r.output) / g.e2e_s;
  g.simulations = simulations(cost) - sims0;
  g.simulation_wall_s = simulation_wall_s(cost) - wall0;
  return g;
}

}  // namespace

// A cold cost cache's shapes are noted by a first pass and measured in one go (a CostPlan:
// concurrent runs on one cache split them instead of queuing for each in turn). On a warm cache
// the first pass notes nothing and is the result.
GenerationResult simulate_generation(const IStepCost& cost, const GenerationRequest& r) {
  const int sims0 = simulations(cost);
  const double wall0 = simulation_wall_s(cost);
  CostPlan plan;
  try {
    GenerationResult g = generation_pass(cost, r);
    if (plan.empty()) return g;
  } catch (const std::exception&) {
    if (plan.empty()) throw;  // not the placeholders': the real pass would fail the same way
  }
  plan.measure();
  GenerationResult g = generation_pass(cost, r);
  g.simulations = simulations(cost) - sims0;
  g.simulation_wall_s = simulation_wall_s(cost) - wall0;
  return g;
}

nlohmann::json generation_json(const IStepCost& cost, const Deployment& d, const GenerationRequest& r,
                               const GenerationResult& g) {
  using nlohmann::json;
  const TrainiumStepCost* trn = trainium(cost);
  // On a GPU system a "core" of the memory fields is a GPU; there are no logical cores (lnc null).
  const Layout l = trn ? trn->layout() : Layout{};
  const json lnc = trn ? json(l.lnc) : json(nullptr);
  auto breakdown = [](const StepCost& c) {
    return json{{"matmul_s", to_seconds(c.matmul)},
                {"attention_s", to_seconds(c.attention)},
                {"collective_s", to_seconds(c.collective)},
                {"other_s", to_seconds(c.other)}};
  };
  auto nodes = [](const std::vector<CostNode>& ns) {
    json out = json::array();
    for (const auto& n : ns)
      out.push_back({{"node", n.name}, {"category", category_name(n.category)}, {"time_s", n.seconds}, {"repeat", n.repeat}});
    return out;
  };
  json j{{"kind", "llm"},
              {"model", trn ? trn->model().name : gpu(cost).model().name},
              {"system", trn ? trn->system().name : gpu(cost).system().name},
              {"tp", trn ? l.tp : d.tp},
              {"pp", trn ? l.pp : 1},
              {"ep", trn ? l.ep : 1},
              {"lnc", lnc},
              {"dtype", d.dtype},
              {"weights", d.weights},
              {"batch", r.batch},
              {"input_tokens", r.input},
              {"output_tokens", r.output},
              {"chips", cost.chips()},
              {"micro_batches", g.micro_batches},
              {"kv_buckets", kv_buckets_name(r.kv_buckets)},
              {"seq_len", r.seq_len > 0 ? r.seq_len : r.input + r.output},
              {"sequence_parallel", d.sequence_parallel},
              {"clock_scale", d.clock_scale},
              {"ttft_s", g.ttft_s},
              {"tpot_s", g.tpot_s},
              {"e2e_s", g.e2e_s},
              {"time_s", g.e2e_s},
              {"output_tokens_per_s", g.output_tokens_per_s},
              {"memory_bytes_per_core", g.weight_bytes_per_core + g.kv_bytes_per_core + g.activation_bytes_per_core},
              {"weight_bytes_per_core", g.weight_bytes_per_core},
              {"kv_cache_bytes_per_core", g.kv_bytes_per_core},
              {"activation_bytes_per_core", g.activation_bytes_per_core},
              {"hbm_bytes_per_core", g.hbm_bytes_per_core},
              {"prefill_breakdown", breakdown(g.prefill)},
              {"decode_step_breakdown", breakdown(g.decode_mean)},
              {"decode_step_nodes", nodes(g.decode_nodes)},
              {"energy_j", g.energy.total()},
              {"average_power_w", g.e2e_s > 0 ? g.energy.total() / g.e2e_s : 0.0},
              {"peak_power_w", g.peak_power_w},
              {"energy_by_unit_j", g.energy.to_json()},
              {"energy_per_output_token_j", g.energy.total() / static_cast<double>(r.batch * r.output)},
              {"prefill_energy_j", g.prefill.energy.value()},
              {"decode_step_energy_j", g.decode_mean.energy.value()},
              {"idle_power_w", cost.idle_power().value()},
              {"host_power_w", cost.host_power().value()},
              {"simulations", g.simulations},
              {"simulation_wall_s", g.simulation_wall_s}};
  if (!trn) {
    j["gpu"] = gpu(cost).system().gpu.display_name;
    j["cost_model"] = "gpu-roofline";
  }
  return j;
}

nlohmann::json generation_trace(const GenerationResult& g) {
  using nlohmann::json;
  json events = json::array();
  double t_us = 0;
  auto event = [&](const CostNode& n, int tid) {
    events.push_back({{"name", n.name}, {"cat", category_name(n.category)}, {"ph", "X"}, {"pid", 0}, {"tid", tid},
                      {"ts", t_us}, {"dur", n.seconds * 1e6}});
    t_us += n.seconds * 1e6;
  };
  auto emit = [&](const std::vector<CostNode>& ns, const char* phase, int tid) {
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", tid}, {"args", {{"name", phase}}}});
    // A layer kind's nodes (consecutive, named "layer[kind] ...") run back to back, once per
    // layer of that kind; then the step's other nodes (LM head, sends), `repeat` times each.
    std::vector<std::vector<const CostNode*>> kinds;
    std::vector<const CostNode*> tail;
    for (const auto& n : ns) {
      if (!n.name.starts_with("layer[")) {
        tail.push_back(&n);
        continue;
      }
      const std::string kind = n.name.substr(0, n.name.find(']') + 1);
      if (kinds.empty() || !kinds.back().front()->name.starts_with(kind)) kinds.emplace_back();
      kinds.back().push_back(&n);
    }
    for (const auto& k : kinds)
      for (int64_t r = 0; r < k.front()->repeat; ++r)
        for (const CostNode* n : k) event(*n, tid);
    for (const CostNode* n : tail)
      for (int64_t r = 0; r < n->repeat; ++r) event(*n, tid);
  };
  emit(g.prefill_nodes, "prefill", 0);
  emit(g.decode_nodes, "first decode step", 1);
  return json{{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

}  // namespace trnsim::workloads
