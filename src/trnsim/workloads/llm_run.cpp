#include "trnsim/workloads/llm_run.h"

#include "trnsim/workloads/power_counter.h"

namespace trnsim::workloads {

LlmRun run_llm(const std::string& model, Deployment d, const GenerationRequest& r, const PowerCap& cap) {
  LlmRun run;
  const ModelDesc m = load_model(model);
  if (cap.watts > 0) {  // the same generation at each candidate clock
    run.throttle = throttle_workload(d.system, d.clock_scale, cap, [&](double f) {
      Deployment at = d;
      at.clock_scale = f;
      TrainiumStepCost c(m, at);
      const auto g = simulate_generation(c, r);
      return hw::PowerMeasure{g.e2e_s, g.energy.total() / c.chips()};
    });
    d.clock_scale = run.throttle->throttle.clock_scale;
  }
  run.deployment = d;
  run.request = r;
  run.cost = std::make_unique<TrainiumStepCost>(m, d);
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
