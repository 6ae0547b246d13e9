// `trnsim llm` speed (issue 12 targets): a 70B model at TP 32 with 128/128 tokens under 5 s
// cold and 1 s warm, a 405B model with a 10,000-token prompt under 10 s cold, under 2 GB
// resident. Beside each: the wall time of the timing mode the analytical mode replaces, i.e.
// simulating every node of every layer at its exact shape for the prefill and for each of the
// O - 1 decode steps (estimated from the measured simulation of the prefill and of the first
// and last decode steps, one layer of each kind, times the layers; contexts differ per step,
// so a timing-mode run could not reuse one step's simulations for the next).
//   ./build/bench/bench_llm_speed
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "trnsim/workloads/llm_generation.h"

using namespace trnsim;
using namespace trnsim::workloads;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double generation_wall(const ModelDesc& m, const Deployment& d, const GenerationRequest& r) {
  const double t0 = now();
  TrainiumStepCost cost(m, d);
  simulate_generation(cost, r);
  return now() - t0;
}

// One step simulated node by node at exact shapes, without any cache: the timing mode.
double timing_mode_step_wall(const ModelDesc& m, const Deployment& d, const StepBatch& b) {
  StepCostOptions o;
  o.use_disk_cache = false;
  o.interpolate = false;
  TrainiumStepCost cost(m, d, o);
  const double t0 = now();
  double wall = 0;
  for (const auto& n : cost.nodes(b)) (void)n;  // each layer kind once, measured
  wall = now() - t0;
  // Every layer is simulated in the timing mode, not one per kind: scale by layers / kinds.
  int64_t kinds = 0;
  for (const auto& n : cost.nodes(b))
    if (n.name.ends_with("qkv_proj") || n.name.ends_with("q_a_proj") || n.name.ends_with("q_proj")) ++kinds;
  return wall * static_cast<double>(m.layers) / static_cast<double>(std::max<int64_t>(1, kinds));
}

void bench(const char* model, const char* system, int tp, GenerationRequest r) {
  const ModelDesc m = load_model(model);
  Deployment d;
  d.system = system;
  d.tp = tp;
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("trnsim_llm_speed_{}", getpid());
  std::filesystem::remove_all(dir);
  setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  const double cold = generation_wall(m, d, r), warm = generation_wall(m, d, r);
  std::filesystem::remove_all(dir);
  StepBatch prefill, first, last;
  prefill.prefills.assign(static_cast<size_t>(r.batch), PrefillChunk{r.input, 0});
  first.decode_contexts.assign(static_cast<size_t>(r.batch), r.input);
  last.decode_contexts.assign(static_cast<size_t>(r.batch), r.input + r.output - 2);
  const double timing = timing_mode_step_wall(m, d, prefill) +
                        (r.output - 1) * 0.5 * (timing_mode_step_wall(m, d, first) + timing_mode_step_wall(m, d, last));
  fmt::print("{:<16} {:<15} tp {:>3}  b{} {}/{}   analytical cold {:6.2f} s, warm {:6.3f} s   timing mode ~{:8.1f} s\n", model,
             system, tp, r.batch, r.input, r.output, cold, warm, timing);
}

}  // namespace

int main() {
  fmt::print("trnsim llm wall time (this machine), analytical mode vs the timing mode it replaces\n");
  bench("llama-3.1-70b", "trn1.32xlarge", 32, {1, 128, 128});
  bench("llama-3.1-70b", "trn2.48xlarge", 32, {1, 128, 128});
  bench("llama-3.1-405b", "trn2.48xlarge", 64, {1, 10000, 128});
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  fmt::print("peak resident memory {:.0f} MB (whole bench process)\n", u.ru_maxrss / 1024.0);
  return 0;
}
