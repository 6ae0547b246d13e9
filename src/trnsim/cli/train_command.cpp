// `trnsim train`: the step time, throughput, MFU, memory per core and breakdown of a training
// job on a simulated system, and with --tokens the expected time and goodput to train them
// under failures. --json prints the "train" result (time_s = the step).
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "trnsim/common/progress.h"
#include "trnsim/cli/command.h"
#include "trnsim/workloads/train_run.h"
#include "trnsim/workloads/workload_power_cap.h"

namespace trnsim::cli {
namespace {

using nlohmann::json;

struct Args {
  json request = json::object();
  std::vector<int64_t> fail_at;
  bool json_out = false;
};

void print_table(const json& r) {
  const json& l = r["layout"];
  const json& s = r["step"];
  const json& m = r["memory_per_core"];
  constexpr double gib = 1024.0 * 1024 * 1024;
  const bool gpu = r.contains("gpu");  // a GPU system: one rank per GPU (workloads/gpu_train_step.h)
  if (gpu)
    fmt::print("# {} ({:.1f}B parameters) on {} x {} ({} x {}, GPU roofline baseline)\n", r["model"].get<std::string>(),
               r["parameters"].get<double>() * 1e-9, r["nodes"].get<int>(), r["system"].get<std::string>(),
               r["chips"].get<int>(), r["gpu"].get<std::string>());
  else
    fmt::print("# {} ({:.1f}B parameters) on {} x {} ({} chips, {} NeuronCores)\n", r["model"].get<std::string>(),
               r["parameters"].get<double>() * 1e-9, r["nodes"].get<int>(), r["system"].get<std::string>(),
               r["chips"].get<int>(), r["ranks"].get<int>());
  fmt::print("# tp {} pp {} dp {} ep {} cp {}, ZeRO-{}, {} micro-batches of {} x {} tokens, {} schedule, recompute {}, "
             "{} ({}), {}\n", l["tp"].get<int>(), l["pp"].get<int>(), l["dp"].get<int>(), l["ep"].get<int>(),
             l["cp"].get<int>(), l["zero"].get<int>(), l["micro_batches"].get<int64_t>(),
             l["micro_batch"].get<int64_t>(), l["seq"].get<int64_t>(), l["schedule"].get<std::string>(),
             l["recompute"].get<std::string>(), l["dtype"].get<std::string>(), l["precision"].get<std::string>(),
             l["optimizer"].get<std::string>());
  fmt::print("#   fabric: {}\n", r["fabric"].get<std::string>());
  const double step = r["time_s"].get<double>();
  fmt::print("{:<28} {:>12.4f} s\n", "step time", step);
  fmt::print("{:<28} {:>12.2f}\n", "sequences/s", r["sequences_per_s"].get<double>());
  fmt::print("{:<28} {:>12.0f}\n", "tokens/s", r["tokens_per_s"].get<double>());
  fmt::print("{:<28} {:>12.2f} %   ({:.1f} model TFLOPS per chip)\n", "MFU", r["mfu_percent"].get<double>(),
             r["model_tflops_per_chip"].get<double>());
  for (const char* k : {"compute_s", "exposed_comm_s", "bubble_s", "optimizer_s"})
    fmt::print("  {:<26} {:>12.4f} s  {:>5.1f} %\n", k, s[k].get<double>(), 100 * s[k].get<double>() / step);
  fmt::print("{:<28} {:>12.2f} GiB of {:.2f} (stage {}: weights {:.2f}, gradients {:.2f}, optimizer {:.2f}, "
             "activations {:.2f})\n", gpu ? "memory per GPU" : "memory per NeuronCore", m["total_bytes"].get<double>() / gib,
             m["capacity_bytes"].get<double>() / gib, m["stage"].get<int>(), m["weights_bytes"].get<double>() / gib,
             m["gradients_bytes"].get<double>() / gib, m["optimizer_bytes"].get<double>() / gib,
             m["activations_bytes"].get<double>() / gib);
  fmt::print("{:<28} {:>12.1f} J   ({:.4f} J per token, {:.0f} W average, {:.0f} W peak, all {})\n", "energy per step",
             r["energy_j"].get<double>(), r["energy_per_token_j"].get<double>(), r["average_power_w"].get<double>(),
             r["peak_power_w"].get<double>(), gpu ? "GPUs" : "chips");
  if (r.contains("power_cap")) fmt::print("{}\n", workloads::power_cap_line(r["power_cap"]));
  if (!r.contains("train")) return;
  const json& t = r["train"];
  fmt::print("{:<28} {:>12.0f} steps, {:.3g} tokens\n", "to train", t["steps"].get<double>(), t["tokens"].get<double>());
  fmt::print("{:<28} {:>12.2f} days (failure-free {:.2f} days)\n", "expected time", t["expected_s"].get<double>() / 86400,
             t["work_s"].get<double>() / 86400);
  fmt::print("{:<28} {:>12.2f} %   (lost {:.2f} %; job MTBF {:.2f} h, checkpoint {:.1f} s every {:.0f} s, restart {:.0f} s)\n",
             "goodput", t["goodput_percent"].get<double>(), t["lost_percent"].get<double>(),
             t["mtbf_s"].get<double>() / 3600, t["checkpoint_s"].get<double>(), t["checkpoint_interval_s"].get<double>(),
             t["restart_s"].get<double>());
  if (!t.contains("timeline")) return;
  fmt::print("timeline (checkpoint every {} steps):\n", t["checkpoint_every_steps"].get<int64_t>());
  for (const auto& e : t["timeline"])
    fmt::print("  {:>14.1f} s  {:<8} step {}\n", e["time_s"].get<double>(), e["event"].get<std::string>(),
               e["step"].get<int64_t>());
}

int run(Args& a) {
  const progress::Scope shown(progress::command_sink(a.json_out));
  if (!a.fail_at.empty()) a.request["fail_at"] = a.fail_at;
  const json r = workloads::run_train(workloads::train_request(a.request));
  if (a.json_out)
    fmt::print("{}\n", r.dump(2));
  else
    print_table(r);
  return 0;
}

// Options land in the request under their snake_case names; unset ones stay at the defaults.
template <class T>
void opt(CLI::App& sub, std::shared_ptr<Args> a, const std::string& flag, const std::string& help, bool required = false) {
  std::string key = flag.substr(2);
  for (char& ch : key) ch = ch == '-' ? '_' : ch;
  auto* o = sub.add_option_function<T>(flag, [a, key](const T& v) { a->request[key] = v; }, help);
  if (required) o->required();
}

Register reg{{"train",
              [](CLI::App& sub) -> std::function<int()> {
                auto a = std::make_shared<Args>();
                opt<std::string>(sub, a, "--model", "a configs/models preset or a config.json", true);
                opt<std::string>(sub, a, "--system", "a system preset or .yaml (default trn1.32xlarge)");
                opt<int>(sub, a, "--nodes", "instances (UltraServers) of the system joined by EFA");
                opt<int>(sub, a, "--tp", "tensor-parallel degree (NeuronCores)");
                opt<int>(sub, a, "--pp", "pipeline-parallel stages");
                opt<int>(sub, a, "--dp", "data-parallel degree (default: what tp, pp, cp leave)");
                opt<int>(sub, a, "--ep", "expert-parallel degree (within dp)");
                opt<int>(sub, a, "--cp", "context-parallel degree");
                opt<int>(sub, a, "--zero", "ZeRO stage 0..3");
                opt<int64_t>(sub, a, "--micro-batch", "sequences per micro-batch (default 1)");
                opt<int64_t>(sub, a, "--global-batch", "sequences per step", true);
                opt<int64_t>(sub, a, "--seq", "tokens per sequence", true);
                opt<std::string>(sub, a, "--recompute", "none | selective | full");
                opt<std::string>(sub, a, "--dtype", "bf16 | fp8");
                opt<std::string>(sub, a, "--precision", "fp32-master | bf16-sr (stochastic rounding)");
                opt<std::string>(sub, a, "--optimizer", "adamw | lamb");
                opt<std::string>(sub, a, "--schedule", "gpipe | 1f1b | interleaved");
                opt<int>(sub, a, "--virtual-stages", "model chunks per pipeline rank (interleaved)");
                opt<std::string>(sub, a, "--compute-cost", "kernel (the kernel library, default) | step-cost (the inference cost model)");
                opt<int>(sub, a, "--lnc", "logical NeuronCore size (default: the chip's)");
                opt<double>(sub, a, "--clock-scale", "engine clocks as a fraction of the published ones (DVFS; HBM keeps its rate)");
                opt<double>(sub, a, "--power-cap", "power cap, W (per --power-cap-scope): throttle the engine clocks until the step's average power fits");
                opt<std::string>(sub, a, "--power-cap-scope", "what --power-cap covers: chip (default), instance or rack (less the hosts' and rack's fixed power)");
                sub.get_option("--power-cap-scope")->needs("--power-cap");  // alone it did nothing
                opt<double>(sub, a, "--tokens", "tokens to train: expected time and goodput");
                opt<int64_t>(sub, a, "--steps", "steps to train (instead of --tokens)");
                opt<double>(sub, a, "--mtbf-hours", "MTBF of one chip, hours (default 86,300: Llama 3 paper)");
                opt<double>(sub, a, "--node-mtbf-hours", "MTBF of one node (host, software), hours");
                opt<double>(sub, a, "--link-mtbf-hours", "MTBF of one node's network attachment, hours");
                opt<double>(sub, a, "--checkpoint-gbps", "checkpoint write/read GB/s per node (default 2)");
                opt<double>(sub, a, "--checkpoint-interval-s", "seconds of work between checkpoints (default Young/Daly)");
                opt<double>(sub, a, "--reschedule-s", "seconds to detect a failure and relaunch (default 300)");
                opt<double>(sub, a, "--efa-oversubscription", "EFA fat-tree taper (default 1: non-blocking)");
                opt<double>(sub, a, "--degraded-link", "bandwidth factor of the slowest node's EFA (0, 1]");
                opt<double>(sub, a, "--straggler-slowdown", "compute slowdown of the slowest chip (>= 1)");
                sub.add_option("--fail-at", a->fail_at, "inject failures during these steps (a timeline)")->delimiter(',');
                sub.add_flag("--json", a->json_out, "print the JSON result");
                return [a] { return run(*a); };
              },
              "Time a training step (DP/TP/PP/EP/CP, ZeRO), its MFU and memory, and the goodput to train N tokens"}};

}  // namespace
}  // namespace trnsim::cli
