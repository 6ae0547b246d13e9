// The request's keys: every option of `trnsim train`, snake_case.
#include <fmt/format.h>

#include <functional>
#include <limits>
#include <map>

#include "trnsim/common/error.h"
#include "trnsim/workloads/workload_power_cap.h"
#include "trnsim/workloads/train_run.h"

namespace trnsim::workloads {
namespace {

using nlohmann::json;

template <class T>
T get(const json& v, const std::string& key) {
  // nlohmann converts any number to any arithmetic type: 1e308 into an int (undefined), 2^63
  // into an int (wrapped), -1 into nothing in between. An integer option takes a whole number
  // that fits it.
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    const bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max())
                      : v.is_number_integer() ? v.get<int64_t>() >= std::numeric_limits<T>::min() &&
                                                    v.get<int64_t>() <= std::numeric_limits<T>::max()
                                              : false;
    if (!fits)
      throw ConfigError(fmt::format("train: '{}': expected a whole number {} to {}, got {}", key,
                                    std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), v.dump()));
  }
  try {
    return v.get<T>();
  } catch (const json::exception&) {
    throw ConfigError(fmt::format("train: '{}': expected a {}, got {}", key,
                                  std::is_same_v<T, std::string> ? "string" : std::is_same_v<T, bool> ? "boolean"
                                                                                                      : "number",
                                  v.dump()));
  }
}

using Setter = std::function<void(TrainRequest&, const json&, const std::string&)>;

template <class T, class F>
Setter set(F f) {
  return [f](TrainRequest& r, const json& v, const std::string& k) { f(r, get<T>(v, k)); };
}

const std::map<std::string, Setter>& setters() {
  static const std::map<std::string, Setter> s = {
      {"model", set<std::string>([](TrainRequest& r, std::string v) { r.model = v; })},
      {"system", set<std::string>([](TrainRequest& r, std::string v) { r.config.system = v; })},
      {"nodes", set<int>([](TrainRequest& r, int v) { r.config.nodes = v; })},
      {"tp", set<int>([](TrainRequest& r, int v) { r.config.tp = v; })},
      {"pp", set<int>([](TrainRequest& r, int v) { r.config.pp = v; })},
      {"dp", set<int>([](TrainRequest& r, int v) { r.config.dp = v; })},
      {"ep", set<int>([](TrainRequest& r, int v) { r.config.ep = v; })},
      {"cp", set<int>([](TrainRequest& r, int v) { r.config.cp = v; })},
      {"zero", set<int>([](TrainRequest& r, int v) { r.config.zero = v; })},
      {"sequence_parallel", set<bool>([](TrainRequest& r, bool v) { r.config.sequence_parallel = v; })},
      {"schedule", set<std::string>([](TrainRequest& r, std::string v) { r.config.schedule = parse_schedule(v); })},
      {"virtual_stages", set<int>([](TrainRequest& r, int v) { r.config.virtual_stages = v; })},
      {"micro_batch", set<int64_t>([](TrainRequest& r, int64_t v) { r.config.micro_batch = v; })},
      {"global_batch", set<int64_t>([](TrainRequest& r, int64_t v) { r.config.global_batch = v; })},
      {"seq", set<int64_t>([](TrainRequest& r, int64_t v) { r.config.seq = v; })},
      {"recompute", set<std::string>([](TrainRequest& r, std::string v) { r.config.recompute = parse_recompute(v); })},
      {"dtype", set<std::string>([](TrainRequest& r, std::string v) { r.config.dtype = v; })},
      {"precision", set<std::string>([](TrainRequest& r, std::string v) { r.config.precision = parse_precision(v); })},
      {"optimizer", set<std::string>([](TrainRequest& r, std::string v) { r.config.optimizer = parse_optimizer(v); })},
      {"compute_cost", set<std::string>([](TrainRequest& r, std::string v) { r.config.compute_cost = v; })},
      {"lnc", set<int>([](TrainRequest& r, int v) { r.config.lnc = v; })},
      {"clock_scale", set<double>([](TrainRequest& r, double v) { r.config.clock_scale = v; })},
      {"power_cap", set<double>([](TrainRequest& r, double v) { r.power_cap_w = v; })},
      {"power_cap_scope",
       set<std::string>([](TrainRequest& r, std::string v) { r.power_cap_scope = hw::check_power_cap_scope(v); })},
      {"tokens", set<double>([](TrainRequest& r, double v) { r.tokens = v; })},
      {"steps", set<int64_t>([](TrainRequest& r, int64_t v) { r.steps = v; })},
      {"mtbf_hours", set<double>([](TrainRequest& r, double v) { r.failures.chip_mtbf_h = v; })},
      {"node_mtbf_hours", set<double>([](TrainRequest& r, double v) { r.failures.node_mtbf_h = v; })},
      {"link_mtbf_hours", set<double>([](TrainRequest& r, double v) { r.failures.link_mtbf_h = v; })},
      {"checkpoint_gbps", set<double>([](TrainRequest& r, double v) {
         r.checkpoint.write_gbps_per_node = r.checkpoint.read_gbps_per_node = v; })},
      {"checkpoint_interval_s", set<double>([](TrainRequest& r, double v) { r.checkpoint.interval_s = v; })},
      {"reschedule_s", set<double>([](TrainRequest& r, double v) { r.checkpoint.reschedule_s = v; })},
      {"fail_at", [](TrainRequest& r, const json& v, const std::string& k) {
         if (!v.is_array()) throw ConfigError("train: 'fail_at': expected a list of step numbers");
         for (const auto& x : v) r.fail_at.push_back(get<int64_t>(x, k));
       }},
      {"efa_oversubscription", set<double>([](TrainRequest& r, double v) { r.conditions.efa_oversubscription = v; })},
      {"degraded_link", set<double>([](TrainRequest& r, double v) { r.conditions.degraded_link = v; })},
      {"straggler_slowdown", set<double>([](TrainRequest& r, double v) { r.conditions.straggler_slowdown = v; })},
  };
  return s;
}

// Each quantity in the range it has a meaning in, checked before anything is sized: --global-batch
// 2^31 allocated 12 GB, --tokens 1e308 overflowed into negative times, --checkpoint-gbps 0 or
// 1e-300 ran past a minute, -1 gave a negative checkpoint time. 0 keeps a default where it
// has one (dp, tokens, steps, intervals).
void check_ranges(const TrainRequest& r) {
  const auto in = [](const char* flag, double v, double lo, double hi) {
    if (!(v >= lo && v <= hi)) throw ConfigError(fmt::format("train: {} {}: expected {} to {}", flag, v, lo, hi));
  };
  const auto& c = r.config;
  in("--global-batch", static_cast<double>(c.global_batch), 1, 1 << 24);
  in("--micro-batch", static_cast<double>(c.micro_batch), 1, 1 << 24);
  in("--seq", static_cast<double>(c.seq), 1, 2147483648.0);
  for (auto [flag, v] : {std::pair{"--nodes", c.nodes}, {"--dp", c.dp}, {"--tp", c.tp}, {"--pp", c.pp}, {"--ep", c.ep},
                         {"--cp", c.cp}, {"--virtual-stages", c.virtual_stages}, {"--lnc", c.lnc}})
    in(flag, v, 0, 1 << 24);  // 0: the default where there is one; the layout checks the rest
  in("--zero", c.zero, 0, 3);
  in("--tokens", r.tokens, 0, 1e18);  // 0: none; 10^18 is 60,000 x Llama 3's 15 T tokens
  in("--steps", static_cast<double>(r.steps), 0, 1e12);
  for (int64_t s : r.fail_at) in("--fail-at", static_cast<double>(s), 0, 1e12);
  // MTBFs from one second to 10^9 hours; checkpoint bandwidth 1 MB/s to 1 PB/s, as hw quantities.
  for (auto [flag, v] : {std::pair{"--mtbf-hours", r.failures.chip_mtbf_h}, {"--node-mtbf-hours", r.failures.node_mtbf_h},
                         {"--link-mtbf-hours", r.failures.link_mtbf_h}})
    if (v != 0) in(flag, v, 1.0 / 3600, 1e9);
  in("--checkpoint-gbps", r.checkpoint.write_gbps_per_node, 1e-3, 1e6);
  in("--checkpoint-interval-s", r.checkpoint.interval_s, 0, 1e9);
  in("--reschedule-s", r.checkpoint.reschedule_s, 0, 1e9);
}

}  // namespace

TrainRequest train_request(const json& j) {
  if (!j.is_object()) throw ConfigError("train: the request must be an object of options");
  TrainRequest r;
  for (const auto& [k, v] : j.items()) {
    if (v.is_null()) continue;  // an option left at its default
    auto it = setters().find(k);
    if (it == setters().end()) {
      std::string known;
      for (const auto& [name, _] : setters()) known += (known.empty() ? "" : ", ") + name;
      throw ConfigError(fmt::format("train: unknown option '{}' (known: {})", k, known));
    }
    it->second(r, v, k);
  }
  if (r.model.empty()) throw ConfigError("train: 'model' is required (a configs/models preset or a config.json)");
  if (r.config.global_batch <= 0) throw ConfigError("train: 'global_batch' is required");
  if (r.config.seq <= 0) throw ConfigError("train: 'seq' is required");
  check_ranges(r);
  if (!(r.conditions.straggler_slowdown >= 1.0))
    throw ConfigError(fmt::format("train: straggler_slowdown: expected >= 1, got {}", r.conditions.straggler_slowdown));
  return r;
}

}  // namespace trnsim::workloads
