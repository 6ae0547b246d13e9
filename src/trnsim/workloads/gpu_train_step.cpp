#include "trnsim/workloads/gpu_train_step.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "trnsim/common/error.h"
#include "trnsim/workloads/gpu_step_cost.h"
#include "trnsim/workloads/pipeline_schedule.h"
#include "trnsim/workloads/train_model_stats.h"
#include "trnsim/workloads/train_optimizer.h"

namespace trnsim::workloads {
namespace {

struct Traffic {  // a collective's time and the bytes one rank sends over NVLink and over EFA
  double time_ns = 0, nvlink_bytes = 0, efa_bytes = 0;
  Traffic& operator+=(const Traffic& o) {
    time_ns += o.time_ns, nvlink_bytes += o.nvlink_bytes, efa_bytes += o.efa_bytes;
    return *this;
  }
};

// Ring collectives of a group of GPUs, k of them in each of N systems: the NVLink ring inside a
// system, then the 1/k piece between systems over each GPU's share of the EFA (hierarchical, so a
// rank sends the flat ring's (n-1)/n of the buffer per half).
struct GpuFabric {
  double nvlink_gbps = 0, efa_gbps = 0, nvlink_latency_ns = 0, efa_latency_ns = 0;

  GpuFabric(const hw::GpuSystemSpec& s, const TrainConditions& cond, int nodes) {
    if (!(cond.efa_oversubscription >= 1.0))
      throw ConfigError(fmt::format("train: --efa-oversubscription: expected >= 1, got {}", cond.efa_oversubscription));
    if (!(cond.degraded_link > 0.0 && cond.degraded_link <= 1.0))
      throw ConfigError(fmt::format("train: --degraded-link: expected a bandwidth factor in (0, 1], got {}", cond.degraded_link));
    const auto& e = s.gpu.efficiency;
    nvlink_gbps = s.gpu.nvlink_bandwidth.value() / 2 * e.nvlink;  // per direction, at NCCL's bus efficiency
    nvlink_latency_ns = e.collective_latency.value();
    if (nodes > 1) {
      if (!(s.scale_out.bandwidth_per_instance.value() > 0))
        throw ConfigError(fmt::format("train: --nodes {}: {} has no scale-out bandwidth figure", nodes, s.name));
      const double instances = double(s.gpus) / std::max(1, s.gpus_per_instance);
      efa_gbps = std::min(nvlink_gbps, s.scale_out.bandwidth_per_instance.value() * instances / s.gpus *
                                           cond.degraded_link / cond.efa_oversubscription);
      efa_latency_ns = s.scale_out.latency.value();
    }
  }

  // A reduce-scatter (or all-gather) of a `bytes` buffer over the group.
  Traffic half(const GroupPlacement& g, double bytes) const {
    Traffic t;
    if (g.ranks <= 1) return t;
    const double k = g.per_node, n = g.nodes, piece = bytes / k;
    if (k > 1) {
      t.nvlink_bytes = (k - 1) * piece;
      t.time_ns = nvlink_latency_ns + t.nvlink_bytes / nvlink_gbps;
    }
    if (n > 1) {
      t.efa_bytes = (n - 1) * piece / n;
      t.time_ns += (n - 1) * efa_latency_ns + t.efa_bytes / efa_gbps;
    }
    return t;
  }
  Traffic all_reduce(const GroupPlacement& g, double bytes) const {
    Traffic t = half(g, bytes);
    t += half(g, bytes);
    return t;
  }
  Traffic send(double bytes, bool across) const {
    Traffic t;
    (across ? t.efa_bytes : t.nvlink_bytes) = bytes;
    t.time_ns = across ? efa_latency_ns + bytes / efa_gbps : nvlink_latency_ns + bytes / nvlink_gbps;
    return t;
  }
  std::string describe() const {
    if (!(efa_gbps > 0)) return fmt::format("{:.1f} GB/s per GPU over NVLink (one system: no EFA)", nvlink_gbps);
    return fmt::format("{:.1f} GB/s per GPU over NVLink, {:.2f} GB/s per GPU over EFA", nvlink_gbps, efa_gbps);
  }
};

void check_gpu_config(const ModelDesc& m, const TrainConfig& c, const hw::GpuSystemSpec& s) {
  auto refuse = [&](const char* option, const std::string& why) {
    throw UnsupportedError(fmt::format("train {}: {} is a GPU system; {}", option, s.name, why));
  };
  if (c.lnc != 0) refuse("--lnc", "logical NeuronCores are a Trainium notion (a GPU is one rank)");
  if (c.ep != 1) refuse("--ep", "expert parallelism is not modelled on the GPU baseline (ep 1)");
  if (c.cp != 1) refuse("--cp", "context parallelism is not modelled on the GPU baseline (cp 1)");
  if (c.tp > s.nvlink_domain || s.gpus % c.tp != 0)
    throw ConfigError(fmt::format("train: --tp {} must divide the {} GPUs of {} and fit its NVLink domain of {}", c.tp,
                                  s.gpus, s.name, s.nvlink_domain));
  // Megatron-LM shards heads evenly in training (TransformerConfig: num_attention_heads and
  // num_query_groups must each be a multiple of tp); unlike vLLM it never replicates KV heads.
  if (m.heads % c.tp != 0 || m.kv_heads % c.tp != 0)
    throw ConfigError(fmt::format("train: GPU baseline: {} has {} attention heads and {} KV heads; tp {} must divide both "
                                  "(Megatron-LM shards heads and KV heads evenly)", m.name, m.heads, m.kv_heads, c.tp));
}

// Forward costs of one micro-batch on one tensor-parallel group from the GPU roofline, with
// the LM head over every token (an inference prefill runs it for the last token only).
LayerCosts gpu_layer_costs(const ModelDesc& m, TrainConfig c, const hw::GpuSystemSpec& train_system) {
  c.compute_cost = "step-cost";
  const StepCostFactory factory = [&](const ModelDesc& mm, const Deployment& d) {
    return std::make_unique<GpuStepCost>(mm, d, train_system);
  };
  LayerCosts out = layer_costs(m, c, factory, hw::ChipSpec{}, 1);
  Deployment d;
  d.system = c.system, d.tp = c.tp, d.dtype = c.dtype;
  const GpuStepCost cost(m, d, train_system);
  const double h = double(m.hidden), vocab = double(m.vocab) / c.tp;
  const StepCost all = cost.gemm_cost(double(c.micro_batch) * c.seq, h, vocab);
  const StepCost last = cost.gemm_cost(double(c.micro_batch), h, vocab);
  out.ends.matmul += std::max(0.0, all.time.value() - last.time.value());
  out.ends.energy[0] += all.energy_by_unit - last.energy_by_unit;
  return out;
}

}  // namespace

TrainStep gpu_train_step(const ModelDesc& model, const TrainConfig& c, const hw::GpuSystemSpec& system,
                         const TrainConditions& cond) {
  check_gpu_config(model, c, system);
  TrainStep out;
  out.layout = make_layout(c, 1, system.gpus, system.name, "GPUs");
  const TrainLayout& l = out.layout;
  // An inference engine's per-iteration cost (scheduling, sampling, host sync) is not a
  // training pass's: the step's fixed costs here are its collectives and the optimizer.
  hw::GpuSystemSpec ts = system;
  ts.gpu.efficiency.step_overhead = Nanoseconds(0);
  const LayerCosts costs = gpu_layer_costs(model, c, ts);
  const GpuFabric fab(system, cond, c.nodes);
  const auto& eff = system.gpu.efficiency;
  const auto& en = system.gpu.energy;
  const double hbm_gbps = system.gpu.hbm.bandwidth.value() * eff.memory;  // bytes/ns at the memory efficiency
  const int v = c.schedule == PipelineSchedule::Interleaved ? c.virtual_stages : 1;
  const int64_t m = l.micro_batches;
  const GroupPlacement dpg = place_group(l, l.dp, l.tp);
  const double stage_ranks = double(l.tp) * l.dp;
  const double gb = grad_bytes_per_param(c), wb = weight_bytes_per_param(c);

  std::vector<double> fwd, bwd, comm_fwd, comm_bwd, dp_comm, gathers;
  double peak_dynamic_w = 0, opt = 0;
  for (int r = 0; r < c.pp; ++r) {
    const int64_t layers = stage_layer_count(model, c.pp, r), moe = stage_moe_layer_count(model, c.pp, r);
    PassCost f = costs.dense_layer * double(layers - moe) + costs.moe_layer * double(moe);
    if (r == c.pp - 1) f = f + costs.ends;
    const PassCost b = backward_of(f), re = recompute_of(f, c.recompute);
    const RankParams p = rank_params(model, c, r);
    // ZeRO 0: all-reduce the gradients once; 1-3: reduce-scatter them and all-gather the weights.
    const Traffic grads = c.zero == 0 ? fab.all_reduce(dpg, p.total() * gb) : fab.half(dpg, p.total() * gb);
    const Traffic params = c.zero == 0 ? Traffic{} : fab.half(dpg, p.total() * wb);
    double z_fwd = 0, z_bwd = 0;  // ZeRO-3 gathers every pass, ZeRO-2 reduce-scatters every backward
    if (c.zero == 3) {
      z_fwd = exposed_comm_ns(params.time_ns, f.total(), layers);
      z_bwd = exposed_comm_ns(params.time_ns + grads.time_ns, b.total(), layers);
    } else if (c.zero == 2) {
      z_bwd = exposed_comm_ns(grads.time_ns, b.total(), layers);
    }
    const double accumulate = m > 1 ? p.total() * gb * 3 / hbm_gbps : 0.0;
    fwd.push_back((f.total() + z_fwd) / v);
    bwd.push_back((b.total() + re.total() + z_bwd + accumulate) / v);
    comm_fwd.push_back((f.collective + z_fwd) / v);
    comm_bwd.push_back((b.collective + re.collective + z_bwd) / v);
    dp_comm.push_back(c.zero >= 2 ? 0.0 : grads.time_ns);
    gathers.push_back(c.zero == 1 || c.zero == 2 ? params.time_ns : 0.0);
    if (r == 0) {
      out.tp_comm_ns = double(m) * (f.collective + b.collective + re.collective);
      out.recompute_ns = re.total();
    }
    const double owned = c.zero >= 1 ? p.total() / l.dp : p.total();
    opt = std::max(opt, owned * optimizer_hbm_bytes_per_param(c) / hbm_gbps);
    // Energy of the stage: its passes on every tp group, the optimizer's HBM traffic, and the
    // data-parallel traffic (HBM at both ends, NVLink or EFA per byte), all ranks.
    out.energy += (f.total_energy() + b.total_energy() + re.total_energy()) * (double(m) * l.dp);
    out.energy[EnergyUnit::HBM] += owned * optimizer_hbm_bytes_per_param(c) * en.hbm_per_byte.value() * stage_ranks;
    const double per_step = c.zero >= 2 ? double(m) : 1.0;  // ZeRO 2/3 reduce every micro-batch
    const double rounds = c.zero == 3 ? 2.0 * double(m) : (c.zero >= 1 ? 1.0 : 0.0);
    const double nv = per_step * grads.nvlink_bytes + rounds * params.nvlink_bytes;
    const double efa = per_step * grads.efa_bytes + rounds * params.efa_bytes;
    out.dp_bytes_per_rank = std::max(out.dp_bytes_per_rank, nv + efa);
    out.energy[EnergyUnit::HBM] += 2 * (nv + efa) * en.hbm_per_byte.value() * stage_ranks;
    out.energy[EnergyUnit::NVLink] += nv * en.nvlink_per_byte.value() * stage_ranks;
    out.energy[EnergyUnit::EFA] += efa * system.energy.scale_out_per_byte.value() * stage_ranks;
    for (const PassCost* q : {static_cast<const PassCost*>(&f), &b})
      if (q->total() > 0) peak_dynamic_w = std::max(peak_dynamic_w, q->total_energy().dynamic() / c.tp / (q->total() * 1e-9));
  }
  const GroupPlacement ppg = place_group(l, l.pp, int64_t(l.tp) * l.dp);
  const double act = double(c.micro_batch) * c.seq * model.hidden * 2.0 / c.tp;
  const Traffic p2p = c.pp > 1 ? fab.send(act, ppg.nodes > 1) : Traffic{};
  const PipelineTiming pt = time_pipeline(c.schedule, m, v, fwd, bwd, p2p.time_ns);
  out.memory = memory_per_core(model, c, l, pt.peak_in_flight, system.gpu.hbm.capacity.value());
  check_fits(out.memory, c, model.name, "GPU");

  double dp_exposed = 0, gather = 0;
  for (int r = 0; r < c.pp; ++r) {
    const double window = bwd[r] - comm_bwd[r];  // the last micro-batch's backward
    const int64_t layers = stage_layer_count(model, c.pp, r);
    if (dp_comm[r] > 0) dp_exposed = std::max(dp_exposed, exposed_comm_ns(dp_comm[r], window, layers));
    gather = std::max(gather, gathers[r]);
    out.dp_comm_ns = std::max(out.dp_comm_ns, dp_comm[r]);
  }
  const double peak = system.gpu.peak(c.dtype == "fp8" ? numerics::DType::F8E4M3 : numerics::DType::BF16).value() * 1e12;
  fill_step_times(out, c, model, pt, {fwd, bwd, comm_fwd, comm_bwd, dp_exposed, gather, opt}, v, p2p.time_ns, peak);
  const double passes = double(m) * v;
  out.params_total = model_stats(model).total;
  out.fabric = fab.describe();
  // Pipeline sends (activations forward, their gradients back) across pp - 1 boundaries, then
  // every GPU's static power over the step.
  if (c.pp > 1) {
    const double bytes = act * 2 * passes * stage_ranks * (c.pp - 1);
    out.energy[EnergyUnit::HBM] += 2 * bytes * en.hbm_per_byte.value();
    out.energy[ppg.nodes > 1 ? EnergyUnit::EFA : EnergyUnit::NVLink] +=
        bytes * (ppg.nodes > 1 ? system.energy.scale_out_per_byte.value() : en.nvlink_per_byte.value());
  }
  out.energy[EnergyUnit::Static] = en.static_power.value() * l.chips * out.step_ns * 1e-9;
  out.peak_power_w = (en.static_power.value() + peak_dynamic_w) * l.chips;
  return out;
}

}  // namespace trnsim::workloads
