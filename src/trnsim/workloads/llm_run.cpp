#include "trnsim/workloads/llm_run.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/hw/gpu_spec.h"
#include "trnsim/workloads/gpu_step_cost.h"
#include "trnsim/workloads/power_counter.h"

namespace trnsim::workloads {
namespace {

void check_gpu_options(const Deployment& d, const GenerationRequest& r) {
  auto refuse = [&](const char* option, const std::string& why) {
    throw UnsupportedError(fmt::format("{}: {} is a GPU system; {}", option, d.system, why));
  };
  if (d.lnc != 0) refuse("--lnc", "logical NeuronCores are a Trainium notion (a GPU is one device)");
  if (d.pp != 1) refuse("--pp", "the GPU baseline is tensor parallel only (pp 1)");
  if (d.ep != 1) refuse("--ep", "the GPU baseline is tensor parallel only (ep 1)");
  if (d.sequence_parallel) refuse("--sequence-parallel", "the GPU baseline does not model sequence parallelism");
  if (r.micro_batches != 0) refuse("--micro-batches", "micro-batches need pipeline stages (pp > 1)");
}

std::unique_ptr<IStepCost> step_cost(const ModelDesc& m, const Deployment& d) {
  if (hw::is_gpu_system(d.system)) return std::make_unique<GpuStepCost>(m, d, gpu_system_of(d));
  return std::make_unique<TrainiumStepCost>(m, d);
}

}  // namespace

KvBuckets default_kv_buckets(const std::string& system, const std::string& given) {
  if (!given.empty()) return parse_kv_buckets(given);
  return hw::is_gpu_system(system) ? KvBuckets::Exact : KvBuckets::Compiled;
}

LlmRun run_llm(const std::string& model, Deployment d, const GenerationRequest& r, const PowerCap& cap) {
  LlmRun run;
  const ModelDesc m = load_model(model);
  if (hw::is_gpu_system(d.system)) check_gpu_options(d, r);
  hw::check_power_cap_scope(cap.scope);
  if (cap.watts != 0) {  // the same generation at each candidate clock (a negative cap is refused there)
    run.throttle = throttle_workload(d.system, d.clock_scale, cap, [&](double f) {
      Deployment at = d;
      at.clock_scale = f;
      const auto c = step_cost(m, at);
      const auto g = simulate_generation(*c, r);
      return hw::PowerMeasure{g.e2e_s, g.energy.total() / c->chips()};
    });
    d.clock_scale = run.throttle->throttle.clock_scale;
  }
  run.deployment = d;
  run.request = r;
  run.cost = step_cost(m, d);
  run.result = simulate_generation(*run.cost, r);
  return run;
}

nlohmann::json LlmRun::json() const {
  auto j = generation_json(*cost, deployment, request, result);
  if (throttle) j["power_cap"] = power_cap_json(*throttle);
  return j;
}

nlohmann::json LlmRun::trace() const {
  auto t = generation_trace(result);
  // Prefill at its power, then every decode step at the mean step's (the energy reported is
  // prefill + steps x the mean step's: simulate_generation samples the steps).
  const double chips = cost->chips(), ttft = result.ttft_s;
  const double decode_j = result.energy.total() - result.prefill.energy_by_unit.total();
  add_power_counter(t, {{0, ttft, result.prefill.energy_by_unit.total(), chips}, {ttft, result.e2e_s, decode_j, chips}}, 1,
                    "power (the replica's chips)");
  return t;
}

}  // namespace trnsim::workloads
