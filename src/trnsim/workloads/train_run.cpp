#include "trnsim/workloads/train_run.h"

#include <cmath>
#include <optional>

#include "trnsim/common/error.h"
#include "trnsim/hw/energy_loader.h"
#include "trnsim/hw/gpu_spec.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/workloads/gpu_train_step.h"
#include "trnsim/workloads/workload_power_cap.h"
#include "trnsim/workloads/train_memory.h"
#include "trnsim/workloads/train_model_stats.h"

namespace trnsim::workloads {
namespace {

using nlohmann::json;

json layout_json(const TrainConfig& c, const TrainLayout& l) {
  return {{"tp", l.tp}, {"pp", l.pp}, {"dp", l.dp}, {"ep", l.ep}, {"cp", l.cp}, {"zero", c.zero},
          {"micro_batch", c.micro_batch}, {"micro_batches", l.micro_batches}, {"global_batch", c.global_batch},
          {"seq", c.seq}, {"schedule", name(c.schedule)}, {"virtual_stages", c.virtual_stages},
          {"recompute", name(c.recompute)}, {"dtype", c.dtype}, {"precision", name(c.precision)},
          {"optimizer", name(c.optimizer)}, {"compute_cost", c.compute_cost}, {"sequence_parallel", c.sequence_parallel && l.tp > 1}};
}

json memory_json(const MemoryUse& u) {
  return {{"stage", u.stage}, {"weights_bytes", u.weights}, {"gradients_bytes", u.gradients},
          {"optimizer_bytes", u.optimizer}, {"activations_bytes", u.activations}, {"total_bytes", u.total()},
          {"capacity_bytes", u.capacity}};
}

json step_json(const TrainStep& s) {
  const double ns = 1e-9;
  return {{"compute_s", s.compute_ns * ns}, {"exposed_comm_s", s.exposed_comm_ns * ns}, {"bubble_s", s.bubble_ns * ns},
          {"optimizer_s", s.optimizer_ns * ns}, {"forward_s", s.forward_ns * ns}, {"backward_s", s.backward_ns * ns},
          {"recompute_s", s.recompute_ns * ns}, {"tp_comm_s", s.tp_comm_ns * ns}, {"pp_send_s", s.pp_send_ns * ns},
          {"ep_comm_s", s.ep_comm_ns * ns}, {"cp_comm_s", s.cp_comm_ns * ns}, {"dp_comm_s", s.dp_comm_ns * ns},
          {"dp_exposed_s", s.dp_exposed_ns * ns}, {"zero_gather_s", s.zero_gather_ns * ns},
          {"bubble_percent", s.bubble_fraction * 100}, {"dp_bytes_per_rank", s.dp_bytes_per_rank}};
}

double checkpoint_bytes(const ModelDesc& m, const TrainConfig& c) {
  return model_stats(m).total * (weight_bytes_per_param(c) + optimizer_bytes_per_param(c));
}

json energy_json(const TrainStep& s, const TrainConfig& c) {
  const double step_s = s.step_ns * 1e-9, e = s.energy.total(), tokens = double(c.global_batch) * c.seq;
  return {{"energy_j", e},
          {"average_power_w", step_s > 0 ? e / step_s : 0.0},
          {"peak_power_w", s.peak_power_w},
          {"energy_by_unit_j", s.energy.to_json()},
          {"energy_per_token_j", e / tokens},
          {"ep_traffic", {{"bytes", s.ep_bytes}, {"energy_j", s.ep_energy.total()}, {"energy_by_unit_j", s.ep_energy.to_json()}}},
          {"cp_traffic", {{"bytes", s.cp_bytes}, {"energy_j", s.cp_energy.total()}, {"energy_by_unit_j", s.cp_energy.to_json()}}},
          {"tokens_per_s_per_mw_chip", tokens / e * 1e6}};
}

json goodput_json(const TrainRequest& r, const ModelDesc& m, const TrainStep& s, int nodes) {
  CheckpointModel ck = r.checkpoint;
  ck.bytes = checkpoint_bytes(m, r.config);
  const double step_s = s.step_ns * 1e-9;
  const double tokens_per_step = double(r.config.global_batch) * r.config.seq;
  const int64_t steps = r.steps > 0 ? r.steps : int64_t(std::ceil(r.tokens / tokens_per_step));
  json out = {{"steps", steps}, {"checkpoint_bytes", ck.bytes}};
  const Goodput g = goodput(double(steps) * step_s, s.layout.chips, nodes, r.failures, ck);
  out.update({{"tokens", double(steps) * tokens_per_step}, {"work_s", g.work_s}, {"expected_s", g.expected_s},
              {"energy_j", double(steps) * s.energy.total()},  // the steps' work, without failures' rework
              {"simulated_s", g.simulated_s}, {"goodput_percent", g.goodput * 100},
              {"lost_percent", g.lost_fraction * 100}, {"mtbf_s", g.mtbf_s}, {"checkpoint_s", g.checkpoint_s},
              {"restart_s", g.restart_s}, {"checkpoint_interval_s", g.interval_s},
              {"chip_mtbf_hours", r.failures.chip_mtbf_h}, {"node_mtbf_hours", r.failures.node_mtbf_h},
              {"link_mtbf_hours", r.failures.link_mtbf_h}});
  if (!r.fail_at.empty()) {
    const int64_t every = std::max<int64_t>(1, int64_t(std::llround(g.interval_s / step_s)));
    json events = json::array();
    for (const auto& e : failure_timeline(steps, step_s, every, g.checkpoint_s, g.restart_s, r.fail_at))
      if (e.event != "checkpoint") events.push_back({{"time_s", e.time_s}, {"event", e.event}, {"step", e.step}});
    out["checkpoint_every_steps"] = every;
    out["timeline"] = events;
    out["timeline_s"] = events.back()["time_s"];
  }
  return out;
}

}  // namespace

json run_train(const TrainRequest& r, const StepCostFactory& factory) {
  // A GPU system runs the GPU baseline's training step (gpu_train_step.h); `factory` is the
  // Trainium step-cost model's.
  const bool gpu = hw::is_gpu_system(r.config.system);
  const hw::SystemSpec sys = gpu ? hw::SystemSpec{} : hw::load_system(r.config.system);
  const hw::GpuSystemSpec gsys = gpu ? hw::load_gpu_system(r.config.system) : hw::GpuSystemSpec{};
  const ModelDesc m = load_model(r.model);
  auto step_at = [&](double f) {  // the step with the engine (SM) clocks at f
    TrainConfig c = r.config;
    c.clock_scale = f;
    if (gpu) return gpu_train_step(m, c, f != 1 ? hw::gpu_at_clock_scale(gsys, f) : gsys, r.conditions);
    hw::SystemSpec at = sys;
    if (f != 1) at.chip = hw::at_clock_scale(sys.chip, f);
    return train_step(m, c, at, factory, r.conditions);
  };
  std::optional<WorkloadThrottle> throttle;
  double clock = r.config.clock_scale;
  if (r.power_cap_w != 0) {  // a negative cap is refused there (it was taken as none)
    throttle = throttle_workload(r.config.system, clock, PowerCap{r.power_cap_w, r.power_cap_scope}, [&](double f) {
      const TrainStep t = step_at(f);
      return hw::PowerMeasure{t.step_ns * 1e-9, t.energy.total() / t.layout.chips};
    });
    clock = throttle->throttle.clock_scale;
  }
  const TrainStep s = step_at(clock);
  const double step_s = s.step_ns * 1e-9;
  const double seqs = double(r.config.global_batch) / step_s;
  json out = {{"kind", "train"},
              {"time_s", step_s},
              {"model", m.name},
              {"system", gpu ? gsys.name : sys.name},
              {"nodes", r.config.nodes},
              {"chips", s.layout.chips},
              {"ranks", s.layout.ranks},
              {"parameters", s.params_total},
              {"layout", layout_json(r.config, s.layout)},
              {"sequences_per_s", seqs},
              {"tokens_per_s", seqs * double(r.config.seq)},
              {"mfu_percent", s.mfu * 100},
              {"model_tflops_per_chip", s.model_flops / step_s / s.layout.chips * 1e-12},
              {"step", step_json(s)},
              {"memory_per_core", memory_json(s.memory)},
              {"fabric", s.fabric},
              {"clock_scale", clock},
              {"conditions", {{"efa_oversubscription", r.conditions.efa_oversubscription},
                              {"degraded_link", r.conditions.degraded_link},
                              {"straggler_slowdown", r.conditions.straggler_slowdown}}}};
  if (gpu) {
    out["gpu"] = gsys.gpu.display_name;
    out["layout"]["compute_cost"] = "gpu-roofline";
  }
  out.update(energy_json(s, r.config));
  if (throttle) out["power_cap"] = power_cap_json(*throttle);
  if (r.tokens > 0 || r.steps > 0 || !r.fail_at.empty()) {
    if (r.tokens <= 0 && r.steps <= 0)
      throw ConfigError("train: --fail-at needs the run's length: --tokens or --steps");
    out["train"] = goodput_json(r, m, s, r.config.nodes);
  }
  return out;
}

}  // namespace trnsim::workloads
