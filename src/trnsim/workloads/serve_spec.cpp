#include "trnsim/workloads/serve_spec.h"

#include "trnsim/workloads/workload_power_cap.h"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "trnsim/common/error.h"

namespace trnsim::workloads {
namespace {

using nlohmann::json;

std::string text(const json& v, const std::string& name) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  throw ConfigError(fmt::format("--{}: expected a value, got {}", name, v.dump()));
}

double real(const json& v, const std::string& name) {
  if (v.is_number()) return v.get<double>();
  const std::string s = text(v, name);
  double x = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), x);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(x))
    throw ConfigError(fmt::format("--{}: '{}' is not a number", name, s));
  return x;
}

int64_t integer(const json& v, const std::string& name) {
  const double x = real(v, name);
  if (x != std::floor(x) || std::abs(x) > 9e15) throw ConfigError(fmt::format("--{}: {} is not an integer", name, x));
  return static_cast<int64_t>(x);
}

int64_t positive(const json& v, const std::string& name) {
  const int64_t x = integer(v, name);
  if (x < 1) throw ConfigError(fmt::format("--{}: {}; expected >= 1", name, x));
  return x;
}

// An int field (ranks, replicas, tokens): 2^32 + 4 must not become 4.
int as_int(int64_t x, const std::string& name) {
  if (x > std::numeric_limits<int32_t>::max() || x < std::numeric_limits<int32_t>::min())
    throw ConfigError(fmt::format("--{}: {} is too large (at most {})", name, x, std::numeric_limits<int32_t>::max()));
  return static_cast<int>(x);
}

// A seed is a whole number >= 0: -1 became 2^64 - 1 without a word.
uint64_t seed(const json& v) {
  const int64_t x = integer(v, "seed");
  if (x < 0) throw ConfigError(fmt::format("--seed: {}; expected a whole number >= 0", x));
  return static_cast<uint64_t>(x);
}

double non_negative(const json& v, const std::string& name) {
  const double x = real(v, name);
  if (x < 0) throw ConfigError(fmt::format("--{}: {}; expected >= 0", name, x));
  return x;
}

// An MTBF: 0 (no failures drawn) or at least one second; 1e-300 h drew failures without end.
double mtbf_hours(const json& v, const std::string& name) {
  const double h = non_negative(v, name);
  if (h > 0 && h < 1.0 / 3600)
    throw ConfigError(fmt::format("--{}: {} h; expected 0 (none) or at least 1 s ({:.6g} h)", name, h, 1.0 / 3600));
  return h;
}

// Durations, periods and bandwidths: > 0 (-1 s bursts were taken without a word).
double positive_real(const json& v, const std::string& name) {
  const double x = real(v, name);
  if (!(x > 0)) throw ConfigError(fmt::format("--{}: {}; expected > 0", name, x));
  return x;
}

int64_t whole_non_negative(const json& v, const std::string& name) {
  const int64_t x = integer(v, name);
  if (x < 0) throw ConfigError(fmt::format("--{}: {}; expected >= 0", name, x));
  return x;
}

bool flag(const json& v, const std::string& name) {
  if (v.is_boolean()) return v.get<bool>();
  const std::string s = text(v, name);
  if (s == "true" || s == "1") return true;
  if (s == "false" || s == "0") return false;
  throw ConfigError(fmt::format("--{}: '{}'; expected true or false", name, s));
}

std::vector<std::string> items(const json& v, const std::string& name) {
  std::vector<std::string> out;
  if (v.is_array()) {
    for (const auto& x : v) out.push_back(text(x, name));
    return out;
  }
  std::string s = text(v, name);
  for (size_t pos = 0; pos <= s.size();) {  // "a,b,c" as well
    const size_t c = std::min(s.find(',', pos), s.size());
    if (c > pos) out.push_back(s.substr(pos, c - pos));
    pos = c + 1;
  }
  return out;
}

using Set = std::function<void(ServeSpec&, const json&)>;
#define FIELD(expr) [](ServeSpec& s, const json& v) { expr; }

std::vector<ServeOptionInfo> make_table() {
  using K = OptionKind;
  return {
      {"model", K::Value, "a model preset (configs/models) or a Hugging Face config.json", FIELD(s.model = text(v, "model"))},
      {"system", K::Value, "a system preset or a system .yaml", FIELD(s.deployment.system = text(v, "system"))},
      {"tp", K::Value, "tensor-parallel ranks of one replica", FIELD(s.deployment.tp = as_int(positive(v, "tp"), "tp"))},
      {"pp", K::Value, "pipeline stages of one replica (default 1)", FIELD(s.deployment.pp = as_int(positive(v, "pp"), "pp"))},
      {"ep", K::Value, "expert-parallel groups (MoE)", FIELD(s.deployment.ep = as_int(positive(v, "ep"), "ep"))},
      {"lnc", K::Value, "logical NeuronCore size (0: the chip's default)", FIELD(s.deployment.lnc = as_int(integer(v, "lnc"), "lnc"))},
      {"dtype", K::Value, "matmul compute dtype: bf16 or fp8", FIELD(s.deployment.dtype = text(v, "dtype"))},
      {"weights", K::Value, "weight storage: bf16, fp8 or int8", FIELD(s.deployment.weights = text(v, "weights"))},
      {"sequence-parallel", K::Flag, "norms and residuals split over the TP ranks (Megatron sequence parallelism)",
       FIELD(s.deployment.sequence_parallel = flag(v, "sequence-parallel"))},
      {"clock-scale", K::Value, "engine clocks as a fraction of the published ones (DVFS; HBM keeps its rate)",
       FIELD(s.deployment.clock_scale = non_negative(v, "clock-scale"))},
      {"kv-dtype", K::Value, "KV-cache dtype: bf16 or fp8", FIELD(s.deployment.kv_dtype = text(v, "kv-dtype"))},
      {"power-cap", K::Value, "chip power cap, W: the engine clocks throttle until the chips' power while busy fits",
       FIELD(s.power_cap_w = non_negative(v, "power-cap"))},
      {"power-cap-scope", K::Value, "what --power-cap covers: chip (default), instance or rack (less the hosts' and rack's "
       "fixed power, the rest shared by the chips)",
       FIELD(s.power_cap_scope = hw::check_power_cap_scope(text(v, "power-cap-scope")))},
      {"pue", K::Value, "power usage effectiveness for the facility-level energy figures (default 1.15)",
       FIELD(s.pue = real(v, "pue"); if (!(s.pue >= 1)) throw ConfigError(fmt::format("--pue: {}; expected >= 1", s.pue)))},
      {"replicas", K::Value, "replicas of the deployment (decode replicas when disaggregated)",
       FIELD(s.options.cluster.replicas = as_int(positive(v, "replicas"), "replicas"))},
      {"prefill-replicas", K::Value, "prefill replicas: prefill/decode disaggregation (default 0: off)",
       FIELD(s.options.cluster.prefill_replicas = as_int(integer(v, "prefill-replicas"), "prefill-replicas"))},
      {"router", K::Value, "round-robin, least-outstanding (default) or kv-aware", FIELD(s.options.cluster.router = text(v, "router"))},
      {"batching", K::Value, "continuous (vLLM, default) or static (transformers-neuronx buckets)",
       FIELD(s.options.engine.batching = text(v, "batching"))},
      {"max-seqs", K::Value, "sequences per iteration (vLLM max_num_seqs; static: compiled batch), default 256",
       FIELD(s.options.engine.max_seqs = as_int(positive(v, "max-seqs"), "max-seqs"))},
      {"max-batched-tokens", K::Value, "tokens per iteration (vLLM max_num_batched_tokens), default 8192",
       FIELD(s.options.engine.max_batched_tokens = positive(v, "max-batched-tokens"))},
      {"no-chunked-prefill", K::Flag, "prompts are not cut into chunks (each must fit in max-batched-tokens)",
       FIELD(s.options.engine.chunked_prefill = !flag(v, "no-chunked-prefill"))},
      {"block-tokens", K::Value, "KV-cache block (page) size in tokens, default 16",
       FIELD(s.options.engine.block_tokens = as_int(positive(v, "block-tokens"), "block-tokens"))},
      {"hbm-utilization", K::Value, "fraction of HBM the engine may use (vLLM gpu_memory_utilization), default 0.9",
       FIELD(s.options.engine.hbm_utilization = real(v, "hbm-utilization"))},
      {"kv-blocks", K::Value, "KV-cache blocks per replica (default: what HBM leaves)",
       FIELD(s.options.engine.kv_blocks = positive(v, "kv-blocks"))},
      {"preemption", K::Value, "recompute (default) or swap, when the KV cache is full",
       FIELD(s.options.engine.preemption = text(v, "preemption"))},
      {"swap-gb", K::Value, "host memory for swapped KV per replica, GB (default 64)",
       FIELD(s.options.engine.swap_bytes = non_negative(v, "swap-gb") * 1e9)},
      {"swap-gbps", K::Value, "device-host bandwidth for swapping, GB/s (default 32)",
       FIELD(s.options.engine.swap_gbps = real(v, "swap-gbps"))},
      {"prefix-caching", K::Flag, "cache shared prompt prefixes (vLLM automatic prefix caching)",
       FIELD(s.options.engine.prefix_caching = flag(v, "prefix-caching"))},
      {"prefix-groups", K::Value, "requests share one of this many prompt prefixes (system prompts)",
       FIELD(s.options.traffic.prefix_groups = as_int(whole_non_negative(v, "prefix-groups"), "prefix-groups"))},
      {"prefix-tokens", K::Value, "tokens of each shared prefix",
       FIELD(s.options.traffic.prefix_tokens = as_int(whole_non_negative(v, "prefix-tokens"), "prefix-tokens"))},
      {"buckets", K::List, "static batching: sequence-length buckets (default powers of 2 from 128)",
       [](ServeSpec& s, const json& v) {
         s.options.engine.buckets.clear();
         for (const auto& b : items(v, "buckets")) s.options.engine.buckets.push_back(positive(b, "buckets"));
         std::sort(s.options.engine.buckets.begin(), s.options.engine.buckets.end());
       }},
      {"rate", K::Value, "open loop: mean arrival rate, requests/s", FIELD(s.options.traffic.arrivals.rate_qps = real(v, "rate"))},
      {"arrival", K::Value, "poisson (default), gamma, onoff or ramp", FIELD(s.options.traffic.arrivals.process = text(v, "arrival"))},
      {"burstiness", K::Value, "gamma shape as vLLM's benchmark (1 Poisson, < 1 burstier); implies --arrival gamma",
       FIELD(s.options.traffic.arrivals.burstiness = real(v, "burstiness"))},
      {"on-s", K::Value, "onoff: burst length, s (default 10)", FIELD(s.options.traffic.arrivals.on_s = positive_real(v, "on-s"))},
      {"off-s", K::Value, "onoff: gap length, s (default 10)", FIELD(s.options.traffic.arrivals.off_s = positive_real(v, "off-s"))},
      {"ramp-to", K::Value, "ramp: the rate at the end, requests/s", FIELD(s.options.traffic.arrivals.ramp_to_qps = non_negative(v, "ramp-to"))},
      {"ramp-s", K::Value, "ramp: its length, s (default --duration)", FIELD(s.options.traffic.arrivals.ramp_s = positive_real(v, "ramp-s"))},
      {"concurrency", K::Value, "closed loop: N clients, each sends when its previous request ends",
       FIELD(s.options.traffic.concurrency = as_int(positive(v, "concurrency"), "concurrency"))},
      {"offline", K::Flag, "all requests queued at time 0 (MLPerf Offline, trtllm-bench)",
       FIELD(s.options.traffic.offline = flag(v, "offline"))},
      {"trace", K::Value, "replay an Azure-format CSV (TIMESTAMP,ContextTokens,GeneratedTokens)",
       FIELD(s.options.traffic.trace = text(v, "trace"))},
      {"trace-speedup", K::Value, "trace time divided by this (default 1)",
       FIELD(s.options.traffic.trace_speedup = real(v, "trace-speedup"))},
      {"requests", K::Value, "requests to send (a trace is cycled to reach it)",
       FIELD(s.options.traffic.requests = positive(v, "requests"))},
      {"duration", K::Value, "send for this many seconds", FIELD(s.options.traffic.duration_s = real(v, "duration"))},
      {"input", K::Value, "prompt tokens: N, LO:HI (uniform) or fit:TRACE.csv (log-normal fit), default 512",
       FIELD(s.options.traffic.input = parse_length_spec(text(v, "input"), "input"))},
      {"output", K::Value, "output tokens: N, LO:HI or fit:TRACE.csv, default 128",
       FIELD(s.options.traffic.output = parse_length_spec(text(v, "output"), "output"))},
      {"seed", K::Value, "random seed (default 0)", FIELD(s.options.traffic.seed = seed(v))},
      {"slo", K::Value, "mlperf-server, mlperf-interactive or ttft=2s,tpot=200ms (goodput)",
       FIELD(s.options.slo = parse_slo(text(v, "slo")))},
      {"fail", K::List, "replica[:I]@T, chip[:I]@T, link[:I]@T[+D], degrade[:I]=F@T[+D] (repeatable)",
       [](ServeSpec& s, const json& v) {
         for (const auto& f : items(v, "fail")) s.options.cluster.failures.push_back(parse_failure(f));
       }},
      {"mtbf-hours", K::Value, "chip failures drawn with this mean time between failures per chip",
       FIELD(s.options.cluster.mtbf_hours = mtbf_hours(v, "mtbf-hours"))},
      {"link-mtbf-hours", K::Value, "link failures (fabric at half bandwidth) drawn with this MTBF per chip's link",
       FIELD(s.options.cluster.link_mtbf_hours = mtbf_hours(v, "link-mtbf-hours"))},
      {"link-repair-s", K::Value, "a drawn link failure is repaired after this many seconds (default 600)",
       FIELD(s.options.cluster.link_repair_s = non_negative(v, "link-repair-s"))},
      {"repair-s", K::Value, "a lost chip is replaced after this many seconds (then a cold start)",
       FIELD(s.options.cluster.repair_s = non_negative(v, "repair-s"))},
      {"autoscale", K::Value, "MIN:MAX replicas: add on queue, drain on low utilisation",
       [](ServeSpec& s, const json& v) {
         const std::string t = text(v, "autoscale");
         const size_t c = t.find(':');
         if (c == std::string::npos) throw ConfigError(fmt::format("--autoscale '{}': expected MIN:MAX", t));
         s.options.cluster.autoscale_min = as_int(positive(t.substr(0, c), "autoscale"), "autoscale");
         s.options.cluster.autoscale_max = as_int(positive(t.substr(c + 1), "autoscale"), "autoscale");
         if (s.options.cluster.autoscale_max < s.options.cluster.autoscale_min)
           throw ConfigError(fmt::format("--autoscale '{}': MAX below MIN", t));
       }},
      {"autoscale-interval-s", K::Value, "autoscaler period, s (default 10)",
       FIELD(s.options.cluster.autoscale_interval_s = positive_real(v, "autoscale-interval-s"))},
      {"scale-up-queue", K::Value, "waiting requests per replica that add one (default 4)",
       FIELD(s.options.cluster.scale_up_queue = non_negative(v, "scale-up-queue"))},
      {"scale-down-utilization", K::Value, "busy fraction under which one is drained (default 0.3)",
       FIELD(s.options.cluster.scale_down_utilization = non_negative(v, "scale-down-utilization"))},
      {"load-gbps", K::Value, "cold start: weight load bandwidth per replica, GB/s (default 8)",
       FIELD(s.options.cold.load_gbps = real(v, "load-gbps"))},
      {"compile", K::Flag, "cold start: the program is compiled (not in the cache)",
       FIELD(s.options.cold.program_cached = !flag(v, "compile"))},
      {"program-load-s", K::Value, "cold start: loading a cached program, s (default 5)",
       FIELD(s.options.cold.program_load_s = non_negative(v, "program-load-s"))},
      {"compile-s", K::Value, "cold start: compiling the program, s (default 600)",
       FIELD(s.options.cold.compile_s = non_negative(v, "compile-s"))},
      {"warmup-iterations", K::Value, "cold start: warm-up prefill+decode pairs (default 2)",
       FIELD(s.options.cold.warmup_iterations = as_int(integer(v, "warmup-iterations"), "warmup-iterations"))},
      {"cold", K::Flag, "the replicas start cold at time 0 (the first requests wait for them)",
       FIELD(s.options.cold.start_cold = flag(v, "cold"))},
      {"kv-transfer-gbps", K::Value, "disaggregated: KV transfer bandwidth, GB/s (default: the system's fabric)",
       FIELD(s.options.cluster.kv_transfer_gbps = positive_real(v, "kv-transfer-gbps"))},
      {"kv-transfer-latency-us", K::Value, "disaggregated: KV transfer latency, us (default: the fabric's)",
       FIELD(s.options.cluster.kv_transfer_latency_s = non_negative(v, "kv-transfer-latency-us") * 1e-6)},
      {"timeline-bin-s", K::Value, "time-series bin, s (default 1)", FIELD(s.options.timeline_bin_s = real(v, "timeline-bin-s"))},
      {"timeline", K::Value, "write the per-bin time series (.csv, or .json)", FIELD(s.timeline = text(v, "timeline"))},
      {"power-trace", K::Value, "write a Chrome/Perfetto trace (.json) with the fleet's power counter per time bin "
       "(W, all chips and per chip)", FIELD(s.power_trace = text(v, "power-trace"))},
  };
}

}  // namespace

const std::vector<ServeOptionInfo>& serve_option_table() {
  static const std::vector<ServeOptionInfo> table = make_table();
  return table;
}

ServeSpec serve_spec_from_json(const json& values) {
  ServeSpec s;
  const auto& table = serve_option_table();
  for (auto it = values.begin(); it != values.end(); ++it) {
    std::string key = it.key();
    std::replace(key.begin(), key.end(), '_', '-');
    if (std::none_of(table.begin(), table.end(), [&](const ServeOptionInfo& o) { return o.name == key; }))
      throw ConfigError(fmt::format("serve: unknown option '{}'", it.key()));
  }
  for (const auto& o : table) {
    std::string py = o.name;
    std::replace(py.begin(), py.end(), '-', '_');
    const json* v = values.contains(o.name) ? &values[o.name] : values.contains(py) ? &values[py] : nullptr;
    if (v && !v->is_null()) o.set(s, *v);
  }
  auto& a = s.options.traffic.arrivals;
  if (a.process == "poisson" && a.burstiness != 1.0) a.process = "gamma";  // vLLM: --burstiness means gamma
  if (s.model.empty()) throw ConfigError("serve: --model is required");
  if (s.deployment.system.empty()) throw ConfigError("serve: --system is required");
  if (!(s.options.timeline_bin_s > 0)) throw ConfigError("--timeline-bin-s: expected > 0");
  return s;
}

}  // namespace trnsim::workloads
