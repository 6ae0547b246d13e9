// `trnsim compare --model M --systems A,B[,...]`: the same serving workload on each system, each
// fleet sized to the load and SLO, side by side with cost, energy and ratios to the first system
// (analysis/compare.h). The serving options are `trnsim serve`'s table (workloads/serve_spec.h).
#include <fmt/core.h>

#include <map>
#include <nlohmann/json.hpp>

#include "trnsim/analysis/compare.h"
#include "trnsim/analysis/compare_price.h"
#include "trnsim/cli/command.h"
#include "trnsim/workloads/serve_spec.h"

namespace trnsim::cli {
namespace {

struct Args {
  std::map<std::string, std::string> values;
  std::map<std::string, std::vector<std::string>> lists;
  std::map<std::string, bool> flags;
  std::vector<std::string> systems;
  std::string tp, price_estimates;
  analysis::CompareSpec spec;
  bool json = false;
};

int run(Args a) {
  nlohmann::json serve = nlohmann::json::object();
  for (const auto& [k, v] : a.values)
    if (!v.empty()) serve[k] = v;
  for (const auto& [k, v] : a.lists)
    if (!v.empty()) serve[k] = v;
  for (const auto& [k, v] : a.flags)
    if (v) serve[k] = true;
  a.spec.serve = serve;
  a.spec.systems = a.systems;
  if (!a.tp.empty()) analysis::parse_compare_tp(a.spec, a.tp);
  if (!a.price_estimates.empty()) a.spec.price_estimates = analysis::parse_system_numbers(a.price_estimates, "--price-estimate");
  const auto r = analysis::run_compare(a.spec);
  if (a.json) fmt::print("{}\n", r.json.dump(2));
  else fmt::print("{}", r.table);
  return 0;
}

Register reg{{"compare",
              [](CLI::App& sub) -> std::function<int()> {
                auto a = std::make_shared<Args>();
                sub.add_option("--systems", a->systems, "systems to compare, the first is the reference (trn2.48xlarge,p5.48xlarge)")
                    ->delimiter(',')->required();
                sub.add_option("--tp", a->tp, "tensor-parallel degree: N for all, or SYSTEM=N,... per system (default 1)");
                for (const auto& o : workloads::serve_option_table()) {
                  if (o.name == "system" || o.name == "tp" || o.name == "autoscale" || o.name == "pue") continue;  // compare has its own --pue
                  const std::string flag = "--" + o.name;
                  if (o.kind == workloads::OptionKind::Flag) sub.add_flag(flag, a->flags[o.name], o.help);
                  else if (o.kind == workloads::OptionKind::List) sub.add_option(flag, a->lists[o.name], o.help)->delimiter(',')->type_name("");
                  else {
                    auto* opt = sub.add_option(flag, a->values[o.name], o.help)->type_name("");
                    if (o.name == "model") opt->required();
                    if (o.name == "replicas") opt->description("a fixed fleet of this many replicas (default: sized to the SLO)");
                    if (o.name == "slo") opt->description("the SLO the fleet is sized for (default mlperf-server: TTFT 2 s, TPOT 200 ms)");
                  }
                }
                sub.add_option("--price", a->spec.price, "headline price: on-demand or reserved (both are printed)")->capture_default_str();
                sub.add_option("--price-estimate", a->price_estimates, "SYSTEM=USD per instance-hour,...: an estimate for a system's on-demand price");
                sub.add_option("--pue", a->spec.pue, "power usage effectiveness of the facility")->capture_default_str();
                sub.add_option("--kwh-usd", a->spec.kwh_usd, "electricity price, USD per kWh")->capture_default_str();
                sub.add_option("--attainment", a->spec.attainment, "SLO attainment the sized fleet must reach")->capture_default_str();
                sub.add_option("--max-replicas", a->spec.max_replicas, "the fleet-sizing search stops here")->capture_default_str();
                sub.add_flag("--json", a->json, "print the result as JSON (kind \"compare\")");
                return [a] { return run(*a); };
              },
              "The same serving workload on several systems (Trainium, GPU): latency, fleet, $ per million tokens, J per token"}};

}  // namespace
}  // namespace trnsim::cli
