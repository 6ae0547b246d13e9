// `trnsim serve`: a serving deployment (R replicas of a model on a system) under a traffic
// pattern, simulated request by request over the step costs of `trnsim llm`; prints a summary
// like vLLM's `bench serve` (TTFT, TPOT, ITL, e2e percentiles, throughput, goodput), or --json.
// The options are the table of workloads/serve_spec.h, one flag per entry.
#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "trnsim/cli/command.h"
#include "trnsim/workloads/workload_power_cap.h"
#include "trnsim/workloads/serve_run.h"

namespace trnsim::cli {
namespace {

using nlohmann::json;

struct Args {
  std::map<std::string, std::string> values;
  std::map<std::string, std::vector<std::string>> lists;
  std::map<std::string, bool> flags;
  bool json = false;
};

// Progress on stderr for runs longer than a few seconds: one line rewritten on a terminal,
// a line every 10 s otherwise.
workloads::ServeProgress progress_printer() {
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  auto last = std::make_shared<double>(0.0);
  const bool tty = isatty(2);
  return [=](double sim_s, int64_t done, int64_t total) {
    const double wall = std::chrono::duration<double>(Clock::now() - start).count();
    if (wall < 2 || wall - *last < (tty ? 0.5 : 10)) return;
    *last = wall;
    const std::string of = total >= 0 ? fmt::format("/{}", total) : "";
    fmt::print(stderr, "{}serve: {:.0f} s simulated, {}{} requests done, {:.0f} s wall{}", tty ? "\r" : "", sim_s, done,
               of, wall, tty ? "" : "\n");
    std::fflush(stderr);
  };
}

void row(const char* name, double v, const char* unit = "") { fmt::print("  {:<38} {:>12.3f} {}\n", name, v, unit); }

void print_latency(const json& r, const char* title, const std::string& key) {
  fmt::print("---------------- {} ----------------\n", title);
  for (const char* s : {"mean", "p50", "p90", "p95", "p99", "max"}) {
    const std::string k = fmt::format("{}_{}_s", s, key);
    row(fmt::format("{} (ms)", s).c_str(), r[k].get<double>() * 1e3);
  }
}

void print_summary(const json& r) {
  fmt::print("============ Serving result: {} on {} ============\n", r["model"].get<std::string>(),
             r["system"].get<std::string>());
  fmt::print("  {} replica(s){} of tp {} pp {}, {} batching, router {}\n  traffic: {}\n",
             r["replicas"].get<int>(),
             r["prefill_replicas"].get<int>() ? fmt::format(" + {} prefill", r["prefill_replicas"].get<int>()) : "",
             r["tp"].get<int>(), r["pp"].get<int>(), r["batching"].get<std::string>(), r["router"].get<std::string>(),
             r["traffic"].get<std::string>());
  row("successful requests", r["requests"].get<double>());
  row("simulated duration (s)", r["time_s"].get<double>());
  row("request throughput (req/s)", r["request_throughput_rps"].get<double>());
  row("output token throughput (tok/s)", r["output_token_throughput_tps"].get<double>());
  row("total token throughput (tok/s)", r["total_token_throughput_tps"].get<double>());
  row("steady output throughput (tok/s)", r["steady_output_token_throughput_tps"].get<double>());
  row("burst output throughput (tok/s)", r["burst_output_token_throughput_tps"].get<double>());
  if (r.contains("goodput_rps")) {
    row(fmt::format("goodput, {} (req/s)", r["slo"].get<std::string>()).c_str(), r["goodput_rps"].get<double>());
    row("SLO attainment (%)", 100 * r["slo_attainment"].get<double>());
    fmt::print("  {:<38} {:>12}\n", "p99 TTFT and TPOT within the SLO", r["slo_p99_met"].get<bool>() ? "yes" : "no");
  }
  print_latency(r, "Time to first token", "ttft");
  print_latency(r, "Time per output token (excl. 1st)", "tpot");
  print_latency(r, "Inter-token latency", "itl");
  print_latency(r, "End-to-end latency", "e2e");
  print_latency(r, "Queueing delay", "queue");
  fmt::print("---------------- Engine ----------------\n");
  row("KV cache per replica (tokens)", r["kv_cache_tokens"].get<double>());
  row("mean / peak KV utilisation (%)", 100 * r["mean_kv_utilization"].get<double>());
  row("", 100 * r["peak_kv_utilization"].get<double>());
  row("preemptions", r["preemptions"].get<double>());
  row("retries after failures", r["retries"].get<double>());
  row("cold start of a replica (s)", r["cold_start_s"].get<double>());
  row("energy per output token (J)", r["energy_per_output_token_j"].get<double>());
  if (r.contains("power_cap")) fmt::print("  {}\n", workloads::power_cap_line(r["power_cap"]));
  for (const auto& i : r["incidents"]) {
    fmt::print("  incident: {} of replica {} at {:.1f} s: {} requests retried, {} SLO misses during it, p99 TTFT "
               "{:.3f} s (before {:.3f} s), recovered {}\n",
               i["what"].get<std::string>(), i["replica"].get<int>(), i["at_s"].get<double>(),
               i["retried_requests"].get<int64_t>(), i["slo_violations_during"].get<int64_t>(),
               i["p99_ttft_during_s"].get<double>(), i["p99_ttft_before_s"].get<double>(),
               i["time_to_recover_s"].is_null() ? std::string("not within the run")
                                                 : fmt::format("after {:.1f} s", i["time_to_recover_s"].get<double>()));
  }
}

int run(const Args& a) {
  json values = json::object();
  for (const auto& [k, v] : a.values) values[k] = v;
  for (const auto& [k, v] : a.lists) values[k] = v;
  for (const auto& [k, v] : a.flags)
    if (v) values[k] = true;
  auto spec = workloads::serve_spec_from_json(values);
  const auto r = workloads::run_serve(std::move(spec), a.json ? workloads::ServeProgress{} : progress_printer());
  if (a.json) {
    fmt::print("{}\n", r.result.dump(2));
    return 0;
  }
  if (isatty(2)) fmt::print(stderr, "\r\033[K");
  print_summary(r.result);
  return 0;
}

Register reg{{"serve",
              [](CLI::App& sub) -> std::function<int()> {
                auto a = std::make_shared<Args>();
                for (const auto& o : workloads::serve_option_table()) {
                  const std::string flag = "--" + o.name;
                  if (o.kind == workloads::OptionKind::Flag) {
                    sub.add_flag(flag, a->flags[o.name], o.help);
                  } else if (o.kind == workloads::OptionKind::List) {
                    sub.add_option(flag, a->lists[o.name], o.help)->delimiter(',')->type_name("");
                  } else {
                    auto* opt = sub.add_option(flag, a->values[o.name], o.help)->type_name("");
                    if (o.name == "model" || o.name == "system") opt->required();
                  }
                }
                sub.add_flag("--json", a->json, "print the full result as JSON (kind \"serve\")");
                return [a] {
                  Args copy = *a;
                  std::erase_if(copy.values, [](const auto& kv) { return kv.second.empty(); });
                  std::erase_if(copy.lists, [](const auto& kv) { return kv.second.empty(); });
                  return run(copy);
                };
              },
              "Simulate LLM serving: traffic, batching, KV cache, replicas, tail latency, failures"}};

}  // namespace
}  // namespace trnsim::cli
