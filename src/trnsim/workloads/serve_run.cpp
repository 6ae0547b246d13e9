#include "trnsim/workloads/serve_run.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>

#include "trnsim/common/error.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/workloads/i_batch_scheduler.h"
#include "trnsim/workloads/llm_cost.h"
#include "trnsim/workloads/power_counter.h"
#include "trnsim/workloads/serve_cold_start.h"
#include "trnsim/workloads/serve_memory.h"
#include "trnsim/workloads/serve_report.h"
#include "trnsim/workloads/serve_router.h"
#include "trnsim/workloads/traffic_workload.h"
#include "trnsim/workloads/workload_power_cap.h"

namespace trnsim::workloads {
namespace {

// The fabric between a prefill and a decode replica: NeuronLink when all replicas fit in one
// system (the scale-up bandwidth of a replica's chips), else the system's scale-out (EFA).
void kv_transfer_path(const hw::SystemSpec& sys, int chips_per_replica, const ServeOptions& o, double& gbps,
                      double& latency_s) {
  const int replicas = o.cluster.prefill_replicas + o.cluster.replicas;
  const bool inside = replicas * chips_per_replica <= sys.chips && sys.topology.bandwidth_per_chip.value() > 0;
  gbps = inside ? sys.topology.bandwidth_per_chip.value() * chips_per_replica : sys.scale_out.bandwidth_per_instance.value();
  latency_s = (inside ? sys.topology.link_latency.value() : sys.scale_out.latency.value()) * 1e-9;
  if (o.cluster.kv_transfer_gbps > 0) gbps = o.cluster.kv_transfer_gbps;
  if (o.cluster.kv_transfer_latency_s >= 0) latency_s = o.cluster.kv_transfer_latency_s;
  if (!(gbps > 0))
    throw ConfigError(fmt::format("--prefill-replicas: system {} has no public scale-out bandwidth for the KV "
                                  "transfer; give --kv-transfer-gbps", sys.name));
}

std::string describe_traffic(const TrafficOptions& t) {
  std::string s;
  if (!t.trace.empty()) s = fmt::format("trace {}{}", t.trace, t.trace_speedup != 1 ? fmt::format(" x{}", t.trace_speedup) : "");
  else if (t.offline) s = "offline";
  else if (t.concurrency > 0) s = fmt::format("concurrency {}", t.concurrency);
  else s = fmt::format("{} {} req/s", t.arrivals.process, t.arrivals.rate_qps);
  if (t.trace.empty()) s += fmt::format(", input {}, output {}", t.input.describe(), t.output.describe());
  return s;
}

std::vector<int64_t> default_buckets(int64_t max_context) {
  std::vector<int64_t> b;
  for (int64_t x = 128; x < max_context; x *= 2) b.push_back(x);
  b.push_back(max_context);
  return b;
}

}  // namespace

void validate_serve_options(const ServeOptions& o) {
  const auto& e = o.engine;
  make_batch_scheduler(e.batching);  // the name
  Router check(o.cluster.router);
  if (e.preemption != "recompute" && e.preemption != "swap")
    throw ConfigError(fmt::format("--preemption '{}': expected recompute or swap", e.preemption));
  if (!(e.swap_gbps > 0)) throw ConfigError("--swap-gbps: expected > 0");
  if (o.cluster.prefill_replicas < 0) throw ConfigError("--prefill-replicas: expected >= 0");
  if (o.cluster.prefill_replicas > 0 && e.batching != "continuous")
    throw UnsupportedError("--prefill-replicas with --batching static: disaggregation is modelled for continuous batching");
  if (o.cluster.prefill_replicas > 0 && o.cluster.autoscale_max > 0)
    throw UnsupportedError("--autoscale with --prefill-replicas: the autoscaler scales one pool of replicas");
  if (o.cluster.autoscale_max > 0 && !(o.cluster.autoscale_interval_s > 0))
    throw ConfigError("--autoscale-interval-s: expected > 0");
  if (e.batching == "static" && e.prefix_caching)
    throw UnsupportedError("--prefix-caching with --batching static: static batches hold whole padded slots");
  if (!e.chunked_prefill && o.traffic.input.hi > e.max_batched_tokens && o.traffic.trace.empty())
    throw ConfigError(fmt::format("--input {} with --no-chunked-prefill: prompts past --max-batched-tokens {} could "
                                  "never be scheduled", o.traffic.input.describe(), e.max_batched_tokens));
  for (const auto& f : o.cluster.failures)
    if (f.replica >= o.cluster.prefill_replicas + std::max(o.cluster.replicas, o.cluster.autoscale_max))
      throw ConfigError(fmt::format("--fail {}:{}@{}: replicas are numbered from 0 (prefill replicas first)", f.what,
                                    f.replica, f.at_s));
}

namespace {

// The step cost of a deployment and what the simulation and the result need of it.
struct Prepared {
  std::unique_ptr<IStepCost> cost;
  ServeContext ctx;
  ServeSetup setup;
};

Prepared prepare(const ServeSpec& spec, const Deployment& d, const ModelDesc& model, const ServeOptions& o) {
  Prepared p;
  p.cost = make_step_cost(model, d);
  const IStepCost* cost = p.cost.get();
  StepBatch widest;
  widest.prefills.push_back({o.engine.max_batched_tokens, 0});
  double activations = static_cast<double>(o.engine.activation_bytes_per_core);
  if (activations < 0) {
    const auto* trn = dynamic_cast<const TrainiumStepCost*>(cost);
    activations = trn ? trn->activation_bytes_per_core(widest).value()
                      : activation_bytes_estimate(model, d.tp, o.engine.max_batched_tokens, o.engine.max_seqs);
  }
  ServeContext& ctx = p.ctx;
  ctx.model = model.name;
  ctx.system = d.system;
  ctx.dtype = d.dtype;
  ctx.weights = d.weights;
  ctx.tp = d.tp;
  ctx.pp = d.pp;
  ctx.clock_scale = d.clock_scale;
  ctx.chips_per_replica = cost->chips();
  ctx.cores_per_replica = cost->cores();
  ctx.kv = size_kv_cache(*cost, o.engine, activations);
  ctx.cold = cold_start_time(*cost, o.cold, o.engine);
  ctx.traffic = describe_traffic(o.traffic);
  ctx.energy = {cost->idle_power().value(), cost->host_power().value(), spec.pue};
  ServeSetup& setup = p.setup;
  setup.cost = cost;
  setup.kv_blocks = ctx.kv.blocks;
  setup.max_context = model.max_positions;
  setup.cold = ctx.cold;
  if (o.cluster.prefill_replicas > 0) {
    kv_transfer_path(hw::load_system(d.system), cost->chips(), o, setup.kv_transfer_gbps, setup.kv_transfer_latency_s);
    ctx.kv_transfer_gbps = setup.kv_transfer_gbps;
  }
  return p;
}

// A chip's power while its replica runs iterations: the iterations' dynamic energy and the
// static power over the busy time, per chip.
hw::PowerMeasure busy_power(const ServeOutcome& out, const Prepared& p) {
  const double dynamic = out.rec.energy_by_unit.dynamic(), chips = p.ctx.chips_per_replica;
  return {out.busy_seconds, (dynamic + p.ctx.energy.idle_power_w * out.busy_seconds) / chips};
}

// The fleet's power per timeline bin as a Chrome counter: the bin's dynamic energy plus the
// idle power of the replicas held in it, over the bin (the last one ends with the run).
void write_power_trace(const std::string& path, const ServeOutcome& out, const ServeContext& ctx) {
  const Timeline& t = out.rec.timeline;
  std::vector<PowerSpan> spans;
  for (size_t i = 0; i < t.bins().size(); ++i) {
    const auto& b = t.bins()[i];
    const double t0 = static_cast<double>(i) * t.bin_s(), t1 = std::min(t0 + t.bin_s(), out.end_s);
    if (!(t1 > t0)) continue;
    spans.push_back({t0, t1, b.energy_j + ctx.energy.idle_power_w * b.held_s, b.held_s / (t1 - t0) * ctx.chips_per_replica});
  }
  nlohmann::json trace{{"traceEvents", nlohmann::json::array()}, {"displayTimeUnit", "ms"}};
  add_power_counter(trace, spans, 0, fmt::format("power ({} x {} chips per replica)", ctx.system, ctx.chips_per_replica));
  std::ofstream f(path);
  f << trace.dump() << "\n";
  if (!f) throw ConfigError(fmt::format("--power-trace {}: cannot write the file", path));
}

}  // namespace

ServeRunResult run_serve(ServeSpec spec, const ServeProgress& progress) {
  ServeOptions& o = spec.options;
  validate_serve_options(o);
  const ModelDesc model = load_model(spec.model);
  // The traffic's errors (a broken trace row, lengths past the context) before the cost model,
  // whose first use may measure node costs for a while.
  if (!o.traffic.trace.empty()) RequestSource(o.traffic, model.max_positions).all();
  else RequestSource(o.traffic, model.max_positions);
  o.engine.max_context = model.max_positions;
  if (o.engine.buckets.empty()) o.engine.buckets = default_buckets(model.max_positions);
  std::optional<WorkloadThrottle> throttle;
  if (spec.power_cap_w > 0) {  // the same requests at each candidate clock
    const PowerCap cap{spec.power_cap_w, spec.power_cap_scope};
    throttle = throttle_workload(spec.deployment.system, spec.deployment.clock_scale, cap, [&](double f) {
      Deployment d = spec.deployment;
      d.clock_scale = f;
      const Prepared p = prepare(spec, d, model, o);
      return busy_power(simulate_serving(o, p.setup), p);
    });
    spec.deployment.clock_scale = throttle->throttle.clock_scale;
  }
  const Prepared p = prepare(spec, spec.deployment, model, o);
  ServeOutcome out = simulate_serving(o, p.setup, progress);
  if (!spec.power_trace.empty()) write_power_trace(spec.power_trace, out, p.ctx);
  ServeRunResult r{serve_result_json(out, o, p.ctx), std::move(out.rec.timeline)};
  if (throttle) r.result["power_cap"] = power_cap_json(*throttle);
  if (!spec.timeline.empty()) write_timeline(spec.timeline, r.timeline);
  return r;
}

}  // namespace trnsim::workloads
