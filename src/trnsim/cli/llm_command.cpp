// `trnsim llm`: a model description on a Trainium or GPU system with a parallel layout, a batch
// of prompts prefilled and decoded; prints TTFT, TPOT, throughput, end-to-end latency, memory per
// core (per GPU) and what a decode step spends its time on (workloads/llm_generation.h).
#include <fmt/core.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "trnsim/common/progress.h"
#include "trnsim/cli/command.h"
#include "trnsim/common/error.h"
#include "trnsim/workloads/gpu_step_cost.h"
#include "trnsim/workloads/llm_run.h"

namespace trnsim::cli {
namespace {

struct Args {
  std::string model, trace;
  workloads::Deployment d;
  workloads::GenerationRequest r;
  std::string kv_buckets;  // "": the system's default (default_kv_buckets)
  workloads::PowerCap power_cap;
  bool json = false;
};

constexpr double GiB = 1024.0 * 1024.0 * 1024.0;

// The first line of the table and the pipeline stages.
int print_header(const workloads::IStepCost& c, const Args& a) {
  if (const auto* t = dynamic_cast<const workloads::TrainiumStepCost*>(&c)) {
    const auto& l = t->layout();
    fmt::print("{} on {} ({} chips), tp {} pp {} ep {} lnc {}, {} compute, {} weights\n", t->model().name,
               t->system().name, l.chips, l.tp, l.pp, l.ep, l.lnc, a.d.dtype, a.d.weights);
    return l.pp;
  }
  const auto& g = dynamic_cast<const workloads::GpuStepCost&>(c);
  fmt::print("{} on {} ({} x {}, GPU roofline baseline), tp {}, {} compute, {} weights, clock scale {:g}\n",
             g.model().name, g.system().name, g.chips(), g.system().gpu.display_name, g.deployment().tp, a.d.dtype,
             a.d.weights, a.d.clock_scale);
  return 1;
}

void print_table(const workloads::IStepCost& cost, const Args& a, const workloads::GenerationResult& g) {
  const bool gpu = dynamic_cast<const workloads::GpuStepCost*>(&cost) != nullptr;
  const int pp = print_header(cost, a);
  fmt::print("batch {}{}, {} input tokens, {} output tokens, KV buckets {} (seq len {})\n\n", a.r.batch,
             pp > 1 ? fmt::format(" in {} micro-batches", g.micro_batches) : "", a.r.input, a.r.output,
             workloads::kv_buckets_name(a.r.kv_buckets), a.r.seq_len > 0 ? a.r.seq_len : a.r.input + a.r.output);
  fmt::print("  TTFT                 {:10.2f} ms\n", g.ttft_s * 1e3);
  fmt::print("  TPOT                 {:10.2f} ms  (mean of {} decode steps)\n", g.tpot_s * 1e3, a.r.output - 1);
  fmt::print("  output tokens/s      {:10.1f}\n", g.output_tokens_per_s);
  fmt::print("  end-to-end           {:10.2f} ms\n", g.e2e_s * 1e3);
  fmt::print("  energy               {:10.3f} J  ({:.3f} J per output token, {:.1f} W average, {:.1f} W peak, {} {})\n\n",
             g.energy.total(), g.energy.total() / static_cast<double>(a.r.batch * a.r.output), g.energy.total() / g.e2e_s,
             g.peak_power_w, cost.chips(), gpu ? "GPU(s)" : "chip(s)");
  // GPU memory in GB as NVIDIA quotes it (80 GB); a NeuronCore's in GiB.
  const double unit = gpu ? 1e9 : GiB;
  fmt::print("  memory per {:<10} {:10.2f} {} of {:.2f}  (weights {:.2f}, KV cache {:.2f}, activations {:.2f})\n\n",
             gpu ? "GPU" : "core", (g.weight_bytes_per_core + g.kv_bytes_per_core + g.activation_bytes_per_core) / unit,
             gpu ? "GB" : "GiB", g.hbm_bytes_per_core / unit, g.weight_bytes_per_core / unit,
             g.kv_bytes_per_core / unit, g.activation_bytes_per_core / unit);
  const auto& c = g.decode_mean;
  const double t = std::max(1e-30, to_seconds(c.time));
  fmt::print("  decode step          {:10.3f} ms\n", t * 1e3);
  for (auto [name, v] : {std::pair{"matmul", c.matmul}, {"attention", c.attention}, {"collectives", c.collective},
                         {"other", c.other}})
    fmt::print("    {:<18} {:10.3f} ms  {:5.1f}%\n", name, to_seconds(v) * 1e3, 100.0 * to_seconds(v) / t);
  if (gpu) return;  // the GPU roofline has a breakdown by op kind, no timed nodes
  fmt::print("\n  {:<60} {:>10} {:>6}\n", "decode-step node (one rank)", "time(us)", "x");
  for (const auto& n : g.decode_nodes) fmt::print("  {:<60} {:>10.2f} {:>6}\n", n.name, n.seconds * 1e6, n.repeat);
  fmt::print("\n  ({} timing-mode node simulations, {:.2f} s; the rest from the cost cache)\n", g.simulations,
             g.simulation_wall_s);
}

int run(Args a) {
  const progress::Scope shown(progress::command_sink(a.json));
  a.r.kv_buckets = workloads::default_kv_buckets(a.d.system, a.kv_buckets);
  const workloads::LlmRun run = workloads::run_llm(a.model, a.d, a.r, a.power_cap);
  const auto& g = run.result;
  a.d = run.deployment;
  if (!a.trace.empty()) {
    std::ofstream f(a.trace);
    f << run.trace().dump() << "\n";
    if (!f) throw ConfigError(fmt::format("--trace {}: cannot write the file", a.trace));
  }
  if (a.json) {
    fmt::print("{}\n", run.json().dump(2));
  } else {
    print_table(*run.cost, a, g);
    if (run.throttle) fmt::print("  {}\n", workloads::power_cap_line(workloads::power_cap_json(*run.throttle)));
  }
  return 0;
}

Register reg{{"llm",
              [](CLI::App& sub) -> std::function<int()> {
                auto a = std::make_shared<Args>();
                sub.add_option("--model", a->model, "a model preset (configs/models) or a Hugging Face config.json")->required();
                sub.add_option("--system", a->d.system, "a system preset or a system .yaml")->required();
                sub.add_option("--tp", a->d.tp, "tensor-parallel ranks (logical NeuronCores; GPUs on a GPU system)")->required();
                sub.add_option("--pp", a->d.pp, "pipeline stages (default 1)");
                sub.add_option("--micro-batches", a->r.micro_batches, "with --pp: micro-batches in flight (default min(batch, pp))");
                sub.add_option("--ep", a->d.ep, "expert-parallel groups (MoE; divides --tp)");
                sub.add_option("--lnc", a->d.lnc, "logical NeuronCore size 1 or 2 (default: 2 on Trn2/Trn3, else 1)");
                sub.add_option("--dtype", a->d.dtype, "matmul compute dtype: bf16 (default) or fp8 (GPUs: also fp4 where the GPU has an FP4 peak)");
                sub.add_option("--weights", a->d.weights, "weight storage: bf16 (default), fp8 or int8");
                sub.add_flag("--sequence-parallel", a->d.sequence_parallel,
                             "norms and residuals split over the TP ranks (reduce-scatter + all-gather)");
                sub.add_option("--clock-scale", a->d.clock_scale,
                               "run the chips' engines at this fraction of the published clocks (DVFS; HBM keeps its rate)");
                sub.add_option("--kv-dtype", a->d.kv_dtype, "KV-cache dtype: bf16 (default) or fp8");
                auto* cap = sub.add_option("--power-cap", a->power_cap.watts,
                               "power cap, W (per --power-cap-scope): throttle the engine clocks until the generation's "
                               "average power fits");
                sub.add_option("--power-cap-scope", a->power_cap.scope,
                               "what --power-cap covers: chip (default), instance or rack (less the hosts' and rack's "
                               "fixed power from the system file, the rest shared by the chips)")
                    ->needs(cap);  // alone it did nothing
                sub.add_option("--batch", a->r.batch, "sequences decoded together")->required();
                sub.add_option("--input", a->r.input, "prompt tokens per sequence")->required();
                sub.add_option("--output", a->r.output, "generated tokens per sequence")->required();
                sub.add_option("--seq-len", a->r.seq_len,
                               "compiled sequence length (the KV cache's; default input + output)");
                sub.add_option("--kv-buckets", a->kv_buckets,
                               "what attention reads, prefill and decode: compiled (the Trainium default: the whole "
                               "--seq-len, as transformers-neuronx / NxD Inference compile one bucket), pow2 (buckets "
                               "128, 256, ... up to --seq-len) or exact (the sequence's own tokens; the GPU default, "
                               "a paged KV cache)");
                sub.add_option("--trace", a->trace, "write a Chrome trace of the prefill and a decode step, with a power counter track");
                sub.add_flag("--json", a->json, "print JSON (kind \"llm\") instead of the table");
                return [a] { return run(*a); };
              },
              "Simulate LLM inference (prefill + decode) of a model description on a Trainium or GPU system"}};

}  // namespace
}  // namespace trnsim::cli
