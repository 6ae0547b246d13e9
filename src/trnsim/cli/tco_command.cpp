// `trnsim tco --system S --result RESULT.json`: cloud and owned-fleet cost of a measured
// workload (analysis/tco.h): $ per instance-hour, $ per million tokens (or inferences), J per
// token and tokens per MW, with every assumption printed so each figure can be redone by hand.
#include <fmt/format.h>

#include <fstream>
#include <iostream>

#include "trnsim/analysis/tco.h"
#include "trnsim/cli/command.h"
#include "trnsim/common/error.h"
#include "trnsim/hw/gpu_spec.h"
#include "trnsim/workloads/gpu_step_cost.h"
#include "trnsim/workloads/offline_throughput.h"

namespace trnsim::cli {
namespace {

struct TcoArgs {
  std::string system, result;
  workloads::Deployment d;   // --model: an offline (max-load) run of this deployment
  std::string model;
  workloads::OfflineOptions offline;
  analysis::TcoOptions o;
  bool json = false;
};

nlohmann::json read_result(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw ConfigError(fmt::format("{}: cannot read the result file", path));
  try {
    nlohmann::json j = nlohmann::json::parse(f);
    if (j.is_array()) {
      if (j.empty()) throw ConfigError(fmt::format("{}: an empty list of results", path));
      return j.front();  // a sweep: its first point
    }
    return j;
  } catch (const nlohmann::json::parse_error& e) {
    throw ConfigError(fmt::format("{}: not JSON ({})", path, e.what()));
  }
}

// --model: the steady state of an offline run (workloads/offline_throughput.h) on the GPU
// baseline or the Trainium LLM cost model.
analysis::WorkloadFacts offline_workload(TcoArgs a) {
  a.d.system = a.system;
  const workloads::ModelDesc m = workloads::load_model(a.model);
  const auto cost = hw::is_gpu_system(a.system) ? workloads::make_gpu_step_cost(m, a.d) : workloads::make_step_cost(m, a.d);
  const workloads::OfflineThroughput r = workloads::offline_throughput(*cost, a.offline);
  const double t = r.step.time.value() * 1e-9;
  fmt::print(stderr, "trnsim: offline {}/{} tokens: batch {} ({}), {:.4g} output tokens/s per replica of {} chips\n",
             a.offline.input_tokens, a.offline.output_tokens, r.batch, r.limit, r.output_tokens_per_s, cost->chips());
  return {"tokens", r.output_tokens_per_s, cost->chips(), t > 0 ? r.step.energy.value() / t : 0.0};
}

int run(const TcoArgs& a) {
  analysis::check_tco_options(a.o);  // before the workload run, whose note would come first
  const analysis::SystemCostFacts s = analysis::load_cost_facts(a.system);
  const analysis::WorkloadFacts w =
      a.model.empty() ? analysis::workload_from_json(read_result(a.result), a.result) : offline_workload(a);
  const analysis::TcoResult r = analysis::tco(s, w, a.o);
  if (a.json) {
    std::cout << r.json.dump(2) << "\n";
    return 0;
  }
  std::cout << r.table << "assumptions " << r.json["assumptions"].dump() << "\n";
  return 0;
}

Register reg{{"tco",
              [](CLI::App& app) -> std::function<int()> {
                auto a = std::make_shared<TcoArgs>();
                app.add_option("--system", a->system, "system preset or YAML (Trainium or GPU: trn2.48xlarge, p5.48xlarge)")->required();
                auto* res = app.add_option("--result", a->result, "a result JSON of trnsim llm/serve/train/run --json (throughput, chips, power)");
                app.add_option("--serve", a->result, "a serve result JSON (the same as --result)")->excludes(res);
                app.add_option("--train", a->result, "a train result JSON (the same as --result)")->excludes(res);
                app.add_option("--price", a->o.price, "on-demand, reserved, or USD per instance-hour")->capture_default_str();
                app.add_option("--pue", a->o.pue, "power usage effectiveness of the facility")->capture_default_str();
                app.add_option("--kwh-usd", a->o.kwh_usd, "electricity price, USD per kWh")->capture_default_str();
                app.add_option("--utilisation", a->o.utilisation, "fraction of hours serving at the measured rate")->capture_default_str();
                app.add_option("--years", a->o.amortisation_years, "amortisation of capex, years")->capture_default_str();
                app.add_option("--egress-usd-per-gb", a->o.egress_usd_per_gb, "network egress price")->capture_default_str();
                app.add_option("--egress-gb-per-million", a->o.egress_gb_per_million, "GB of egress per million tokens/inferences")
                    ->capture_default_str();
                app.add_option("--storage-usd-per-month", a->o.storage_usd_per_month, "storage per instance and month")->capture_default_str();
                app.add_option("--tokens", a->o.job_tokens,
                               "cost and energy of a job of this many tokens at the measured rate (a training token budget)");
                app.add_flag("--json", a->json, "print the result as JSON (kind tco)");
                auto* model = app.add_option("--model", a->model, "workload: an offline run of this model (configs/models preset or config.json)")
                                  ->excludes(res);
                app.add_option("--tp", a->d.tp, "with --model: tensor-parallel degree")->capture_default_str()->needs(model);
                app.add_option("--dtype", a->d.dtype, "with --model: matmul dtype (bf16, fp8)")->capture_default_str()->needs(model);
                app.add_option("--weights", a->d.weights, "with --model: weight dtype")->capture_default_str()->needs(model);
                app.add_option("--kv-dtype", a->d.kv_dtype, "with --model: KV-cache dtype")->capture_default_str()->needs(model);
                app.add_option("--input", a->offline.input_tokens, "with --model: prompt tokens")->capture_default_str()->needs(model);
                app.add_option("--output", a->offline.output_tokens, "with --model: output tokens")->capture_default_str()->needs(model);
                return [a] {
                  if (a->result.empty() && a->model.empty())
                    throw ConfigError("tco: give a workload: --result/--serve/--train RESULT.json, or --model M for an offline run");
                  return run(*a);
                };
              },
              "Cost and energy of a measured workload: cloud $/h and $ per million tokens, owned-fleet TCO"}};

}  // namespace
}  // namespace trnsim::cli
