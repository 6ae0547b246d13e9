#include "trnsim/workloads/serve_report.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "trnsim/common/error.h"

namespace trnsim::workloads {
namespace {

using nlohmann::json;

void add_stats(json& j, const std::string& name, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  j["mean_" + name + "_s"] = v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  for (double q : {50.0, 90.0, 95.0, 99.0}) j[fmt::format("p{:g}_{}_s", q, name)] = percentile_sorted(v, q);
  j["max_" + name + "_s"] = v.empty() ? 0.0 : v.back();
}

struct Latencies {
  std::vector<double> ttft, tpot, e2e, queue;
  std::vector<char> good;  // meets the SLO (all true without one)
};

Latencies latencies(const ServeRecorder& rec, const SloOptions& slo) {
  Latencies l;
  const size_t n = rec.records.size();
  l.ttft.reserve(n), l.e2e.reserve(n), l.queue.reserve(n), l.good.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const Request& q = rec.requests[i];
    const RequestRecord& r = rec.records[i];
    const double ttft = r.first_token_s - q.arrival_s;
    l.ttft.push_back(ttft);
    l.e2e.push_back(r.done_s - q.arrival_s);
    l.queue.push_back(r.scheduled_s - q.arrival_s);
    double tpot = 0;
    if (q.output > 1) {
      tpot = (r.done_s - r.first_token_s) / (q.output - 1);
      l.tpot.push_back(tpot);
    }
    const bool ok = (slo.ttft_s <= 0 || ttft <= slo.ttft_s) && (slo.tpot_s <= 0 || tpot <= slo.tpot_s);
    l.good.push_back(ok);
  }
  return l;
}

// Steady state: the median per-bin output rate between the 10th and 90th percentile completion
// times (no ramp-up, no drain). Bursts: the mean rate over bins whose arrivals are in the top
// decile of bins with arrivals.
void add_throughput_shape(json& j, const ServeRecorder& rec) {
  const auto& bins = rec.timeline.bins();
  const double w = rec.timeline.bin_s();
  if (bins.empty()) return;
  std::vector<double> done;
  for (const auto& r : rec.records) done.push_back(r.done_s);
  std::sort(done.begin(), done.end());
  const auto lo = static_cast<size_t>(percentile_sorted(done, 10) / w), hi = static_cast<size_t>(percentile_sorted(done, 90) / w);
  std::vector<double> steady, arrivals, peak;
  double best = 0;
  for (size_t i = 0; i < bins.size(); ++i) {
    const double rate = static_cast<double>(bins[i].output_tokens) / w;
    best = std::max(best, rate);
    if (i >= lo && i <= hi) steady.push_back(rate);
    if (bins[i].arrivals > 0) arrivals.push_back(static_cast<double>(bins[i].arrivals));
  }
  std::sort(steady.begin(), steady.end());
  std::sort(arrivals.begin(), arrivals.end());
  const double cut = percentile_sorted(arrivals, 90);
  double burst = 0;
  int64_t n = 0;
  for (const auto& b : bins)
    if (b.arrivals > 0 && static_cast<double>(b.arrivals) >= cut) burst += static_cast<double>(b.output_tokens) / w, ++n;
  j["steady_output_token_throughput_tps"] = percentile_sorted(steady, 50);
  j["burst_output_token_throughput_tps"] = n ? burst / static_cast<double>(n) : 0.0;
  j["peak_output_token_throughput_tps"] = best;
}

// An incident: SLO misses of the requests that arrived while it lasted, and the time until
// requests again see the latency of the minute before it (p99 TTFT of 10 s windows of arrivals
// within 10 % of the baseline, or the SLO attainment of the baseline).
json incident_json(const Incident& inc, const ServeRecorder& rec, const Latencies& l, double end_s) {
  json j{{"what", inc.what}, {"replica", inc.replica}, {"at_s", inc.at_s}, {"retried_requests", inc.retried}};
  j["back_s"] = inc.back_s >= 0 ? json(inc.back_s) : json(nullptr);
  if (inc.what == "link" || inc.what == "degrade") j["bandwidth_fraction"] = inc.fraction;
  const double until = inc.back_s >= 0 ? inc.back_s : end_s;
  // Requests are numbered in arrival order (open and closed loop alike).
  auto first_at = [&](double t) {
    return static_cast<size_t>(std::partition_point(rec.requests.begin(), rec.requests.end(),
                                                    [t](const Request& q) { return q.arrival_s < t; }) -
                               rec.requests.begin());
  };
  auto window = [&](double a, double b, std::vector<double>& ttft, int64_t& good, bool skip_retried = false) {
    for (size_t i = first_at(a), e = first_at(b); i < e; ++i)
      if (!skip_retried || rec.records[i].retries == 0) ttft.push_back(l.ttft[i]), good += l.good[i];
    std::sort(ttft.begin(), ttft.end());
  };
  // The baseline: the minute before, without the requests the incident itself hit.
  std::vector<double> before, during;
  int64_t good_before = 0, good_during = 0;
  window(inc.at_s - 60, inc.at_s, before, good_before, true);
  window(inc.at_s, until, during, good_during);
  j["requests_during"] = during.size();
  j["slo_violations_during"] = static_cast<int64_t>(during.size()) - good_during;
  j["p99_ttft_before_s"] = percentile_sorted(before, 99);
  j["p99_ttft_during_s"] = percentile_sorted(during, 99);
  const double base_p99 = percentile_sorted(before, 99);
  const double base_good = before.empty() ? 1.0 : static_cast<double>(good_before) / before.size();
  json recover = nullptr;
  for (double t = std::max(inc.at_s, until); t < end_s; t += 10) {
    std::vector<double> w;
    int64_t g = 0;
    window(t, t + 10, w, g);
    if (w.empty()) continue;
    const bool latency_ok = percentile_sorted(w, 99) <= 1.1 * base_p99 + 1e-9;
    const bool slo_ok = static_cast<double>(g) / w.size() >= base_good - 0.01;
    if (latency_ok && slo_ok) {
      recover = t - inc.at_s;
      break;
    }
  }
  j["time_to_recover_s"] = recover;
  return j;
}

void add_deployment(json& j, const ServeOutcome& out, const ServeOptions& opt, const ServeContext& ctx) {
  j["model"] = ctx.model;
  j["system"] = ctx.system;
  j["tp"] = ctx.tp;
  j["pp"] = ctx.pp;
  j["clock_scale"] = ctx.clock_scale;
  j["dtype"] = ctx.dtype;
  j["weights"] = ctx.weights;
  j["replicas"] = opt.cluster.replicas;
  j["prefill_replicas"] = opt.cluster.prefill_replicas;
  j["replicas_peak"] = out.replicas_peak;
  j["chips_per_replica"] = ctx.chips_per_replica;
  j["chips"] = ctx.chips_per_replica * out.replicas_peak;
  j["batching"] = opt.engine.batching;
  j["router"] = opt.cluster.router;
  j["traffic"] = ctx.traffic;
  j["seed"] = opt.traffic.seed;
}

void add_slo(json& j, const Latencies& l, const ServeRecorder& rec, const SloOptions& slo, double duration_s) {
  int64_t good = 0;
  for (char g : l.good) good += g;
  j["slo"] = slo.name;
  j["slo_ttft_s"] = slo.ttft_s;
  j["slo_tpot_s"] = slo.tpot_s;
  j["goodput_rps"] = good / duration_s;
  j["slo_attainment"] = rec.completed ? static_cast<double>(good) / rec.completed : 0.0;
  // MLPerf's criterion: the 99th percentiles of TTFT and TPOT within the limits.
  j["slo_p99_met"] = j["p99_ttft_s"].get<double>() <= slo.ttft_s && j["p99_tpot_s"].get<double>() <= slo.tpot_s;
}

void add_engine(json& j, const ServeOutcome& out, const ServeOptions& opt, const ServeContext& ctx) {
  const ServeRecorder& rec = out.rec;
  j["preemptions"] = rec.preemptions;
  j["swaps"] = rec.swaps;
  j["retries"] = rec.retries;
  j["prefix_cache_hit_tokens"] = rec.prefix_hit_tokens;
  j["iterations"] = rec.iterations;
  j["kv_cache_blocks"] = ctx.kv.blocks;
  j["kv_cache_tokens"] = ctx.kv.blocks * opt.engine.block_tokens;
  j["kv_cache_bytes_per_core"] = ctx.kv.kv_bytes;
  j["weight_bytes_per_core"] = ctx.kv.weight_bytes;
  j["activation_bytes_per_core"] = ctx.kv.activation_bytes;
  double kv_sum = 0, kv_peak = 0;
  int64_t kv_n = 0;
  for (const auto& b : rec.timeline.bins())
    if (b.replicas_up) kv_sum += b.kv_utilization, kv_peak = std::max(kv_peak, b.kv_utilization), ++kv_n;
  j["mean_kv_utilization"] = kv_n ? kv_sum / kv_n : 0.0;
  j["peak_kv_utilization"] = kv_peak;
  j["cold_start_s"] = ctx.cold.total_s();
  j["cold_start_weights_s"] = ctx.cold.weights_s;
  j["cold_start_program_s"] = ctx.cold.program_s;
  j["cold_start_warmup_s"] = ctx.cold.warmup_s;
  if (opt.cluster.prefill_replicas > 0) {
    j["kv_transfer_bandwidth_gbps"] = ctx.kv_transfer_gbps;
    double t = 0;
    for (const auto& r : rec.records) t += r.transfer_s;
    j["mean_kv_transfer_s"] = rec.records.empty() ? 0.0 : t / rec.records.size();
  }
  j["scale_ups"] = out.scale_ups;
  j["scale_downs"] = out.scale_downs;
  j["replica_seconds"] = out.replica_seconds;
  j["busy_fraction"] = out.replica_seconds > 0 ? out.busy_seconds / out.replica_seconds : 0.0;
}

}  // namespace

double percentile_sorted(const std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const double pos = q / 100.0 * static_cast<double>(v.size() - 1);
  const auto i = static_cast<size_t>(std::floor(pos));
  if (i + 1 >= v.size()) return v.back();
  return v[i] + (v[i + 1] - v[i]) * (pos - static_cast<double>(i));
}

json serve_result_json(const ServeOutcome& out, const ServeOptions& opt, const ServeContext& ctx) {
  const ServeRecorder& rec = out.rec;
  const Latencies l = latencies(rec, opt.slo);
  json j;
  j["kind"] = "serve";
  j["time_s"] = out.end_s;
  add_deployment(j, out, opt, ctx);
  j["requests"] = rec.completed;
  j["duration_s"] = out.end_s;
  int64_t in_tokens = 0, out_tokens = 0;
  for (const auto& q : rec.requests) in_tokens += q.input, out_tokens += q.output;
  j["input_tokens"] = in_tokens;
  j["output_tokens"] = out_tokens;
  const double d = out.end_s > 0 ? out.end_s : 1;
  j["request_throughput_rps"] = rec.completed / d;
  j["output_token_throughput_tps"] = out_tokens / d;
  j["total_token_throughput_tps"] = (in_tokens + out_tokens) / d;
  add_throughput_shape(j, rec);
  add_stats(j, "ttft", l.ttft);
  add_stats(j, "tpot", l.tpot);
  add_stats(j, "e2e", l.e2e);
  add_stats(j, "queue", l.queue);
  j["mean_itl_s"] = rec.itl.mean();
  for (double q : {50.0, 90.0, 95.0, 99.0}) j[fmt::format("p{:g}_itl_s", q)] = rec.itl.percentile(q);
  j["max_itl_s"] = rec.itl.max();
  if (!opt.slo.name.empty()) add_slo(j, l, rec, opt.slo, d);
  add_engine(j, out, opt, ctx);
  add_serve_energy(j, out, ctx.energy, out_tokens);
  // Little's law over the whole run: time-mean requests in the system = arrival rate x mean
  // time in the system (equal when every request arrives and leaves within the run).
  double e2e_sum = 0;
  for (double x : l.e2e) e2e_sum += x;
  j["littles_law_mean_in_system"] = rec.in_system_integral / d;
  j["littles_law_rate_x_latency"] = (rec.completed / d) * (l.e2e.empty() ? 0.0 : e2e_sum / l.e2e.size());
  json inc = json::array();
  for (const auto& i : out.incidents) inc.push_back(incident_json(i, rec, l, out.end_s));
  j["incidents"] = inc;
  return j;
}

json timeline_json(const Timeline& t) {
  json out = json::array();
  const double w = t.bin_s();
  for (size_t i = 0; i < t.bins().size(); ++i) {
    const auto& b = t.bins()[i];
    out.push_back({{"t_s", static_cast<double>(i) * w}, {"arrivals", b.arrivals}, {"completions", b.completions},
                   {"output_tokens", b.output_tokens}, {"prompt_tokens", b.prompt_tokens},
                   {"output_token_throughput_tps", static_cast<double>(b.output_tokens) / w},
                   {"preemptions", b.preemptions}, {"retries", b.retries}, {"running", b.running},
                   {"waiting", b.waiting}, {"replicas_up", b.replicas_up}, {"kv_utilization", b.kv_utilization},
                   {"dynamic_energy_j", b.energy_j}, {"held_replica_s", b.held_s}});
  }
  return out;
}

void write_timeline(const std::string& path, const Timeline& t) {
  std::ofstream f(path);
  if (!f) throw ConfigError(fmt::format("--timeline {}: cannot write the file", path));
  if (path.size() >= 5 && path.ends_with(".json")) {
    f << timeline_json(t).dump(1) << "\n";
    return;
  }
  f << "t_s,arrivals,completions,output_tokens,prompt_tokens,preemptions,retries,running,waiting,replicas_up,"
       "kv_utilization\n";
  const double w = t.bin_s();
  for (size_t i = 0; i < t.bins().size(); ++i) {
    const auto& b = t.bins()[i];
    f << fmt::format("{},{},{},{},{},{},{},{},{},{},{:.6f}\n", static_cast<double>(i) * w, b.arrivals, b.completions,
                     b.output_tokens, b.prompt_tokens, b.preemptions, b.retries, b.running, b.waiting, b.replicas_up,
                     b.kv_utilization);
  }
}

}  // namespace trnsim::workloads
