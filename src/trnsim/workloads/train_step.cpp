#include "trnsim/workloads/train_step.h"

#include <algorithm>
#include <vector>

#include "trnsim/workloads/pipeline_schedule.h"
#include "trnsim/workloads/train_model_stats.h"
#include "trnsim/workloads/train_optimizer.h"

namespace trnsim::workloads {

double exposed_comm_ns(double comm, double window, int64_t layers) {
  return std::max(comm - window, comm / double(std::max<int64_t>(layers, 1)));
}

int64_t stage_layer_count(const ModelDesc& m, int pp, int r) { return m.layers / pp + (r < m.layers % pp ? 1 : 0); }

int64_t stage_moe_layer_count(const ModelDesc& m, int pp, int r) {
  const int64_t base = m.layers / pp, extra = m.layers % pp;
  const int64_t first = r * base + std::min<int64_t>(r, extra);
  const int64_t dense = model_stats(m).dense_layers;
  int64_t moe = 0;
  for (int64_t i = first; i < first + stage_layer_count(m, pp, r); ++i) moe += i >= dense ? 1 : 0;
  return moe;
}

void fill_step_times(TrainStep& out, const TrainConfig& c, const ModelDesc& model, const PipelineTiming& pt,
                     const StageTimes& s, int virtual_stages, double p2p_ns, double peak_flops) {
  const int v = virtual_stages;
  size_t br = 0;  // the busiest pipeline rank
  for (size_t r = 0; r < s.fwd.size(); ++r)
    if (s.fwd[r] + s.bwd[r] > s.fwd[br] + s.bwd[br]) br = r;
  const double passes = double(out.layout.micro_batches) * v;
  const double comm_in_passes = passes * (s.comm_fwd[br] + s.comm_bwd[br]);
  out.step_ns = pt.makespan_ns + s.dp_exposed_ns + s.gather_ns + s.optimizer_ns;
  out.bubble_ns = pt.makespan_ns - pt.busy_ns;
  out.compute_ns = pt.busy_ns - comm_in_passes;
  out.exposed_comm_ns = comm_in_passes + s.dp_exposed_ns + s.gather_ns;
  out.optimizer_ns = s.optimizer_ns;
  out.forward_ns = s.fwd[br] * v;
  out.backward_ns = s.bwd[br] * v;
  out.pp_send_ns = c.pp > 1 ? p2p_ns * 2 * passes : 0.0;
  out.dp_exposed_ns = s.dp_exposed_ns;
  out.zero_gather_ns = s.gather_ns;
  out.bubble_fraction = pt.bubble_fraction;
  out.model_flops = train_flops_per_token(model, c.seq) * (double(c.global_batch) * c.seq);
  out.mfu = out.model_flops / (out.step_ns * 1e-9) / (double(out.layout.chips) * peak_flops);
}

namespace {

double exposed(double comm, double window, int64_t layers) { return exposed_comm_ns(comm, window, layers); }

struct StagePasses {
  std::vector<double> fwd, bwd;   // per rank, one pass of one chunk
  std::vector<double> comm_fwd, comm_bwd;  // the communication inside those passes
  double recompute = 0, tp = 0, ep = 0, cp = 0;
  std::vector<double> dp_comm, dp_bytes, dp_elements, zero_gather;  // per rank, per step
  std::vector<int64_t> layers;
  UnitEnergy energy;               // the passes' dynamic energy, all ranks, per step
  double ep_bytes = 0, ep_efa_bytes = 0;  // all-to-all bytes sent, all ranks, per step (of which over EFA)
  double cp_bytes = 0, cp_efa_bytes = 0;  // context-parallel ring sends, all ranks, per step
  double peak_dynamic_w_per_chip = 0;
};

struct Context {
  const ModelDesc& m;
  const TrainConfig& c;
  const TrainLayout& l;
  const hw::SystemSpec& sys;
  const TrainFabric& fab;
  const LayerCosts& costs;
  ModelStats stats;
};

int64_t stage_layers(const Context& x, int r) { return stage_layer_count(x.m, x.c.pp, r); }
int64_t stage_moe_layers(const Context& x, int r) { return stage_moe_layer_count(x.m, x.c.pp, r); }

// The data-parallel collectives of one rank's gradients and (ZeRO) parameters for one step.
struct DpTraffic {
  CommTime grads, params;      // reduction of gradients; gathers of parameters
  double grad_elements = 0, param_elements = 0;
};

DpTraffic dp_traffic(const Context& x, const RankParams& p) {
  const TrainLayout& l = x.l;
  const GroupPlacement dense = place_group(l, l.dp * l.cp, l.tp);
  const GroupPlacement expert = place_group(l, std::max(1, l.dp * l.cp / l.ep), int64_t(l.tp) * l.cp * l.ep);
  const double gb = grad_bytes_per_param(x.c), wb = weight_bytes_per_param(x.c);
  DpTraffic t;
  auto add = [](CommTime& a, const CommTime& b) {
    a.time_ns += b.time_ns, a.bytes_sent_per_rank += b.bytes_sent_per_rank, a.fixed_ns += b.fixed_ns;
  };
  if (x.c.zero == 0) {
    add(t.grads, x.fab.all_reduce(dense, p.dense * gb));
    add(t.grads, x.fab.all_reduce(expert, p.expert * gb));
  } else {
    add(t.grads, x.fab.reduce_scatter(dense, p.dense * gb));
    add(t.grads, x.fab.reduce_scatter(expert, p.expert * gb));
    add(t.params, x.fab.all_gather(dense, p.dense * wb));
    add(t.params, x.fab.all_gather(expert, p.expert * wb));
  }
  return t;
}

StagePasses stage_passes(const Context& x) {
  const TrainConfig& c = x.c;
  const TrainLayout& l = x.l;
  const int v = c.schedule == PipelineSchedule::Interleaved ? c.virtual_stages : 1;
  const int64_t m = l.micro_batches;
  const double tokens = double(c.micro_batch) * c.seq / c.cp;
  const double hbm = hbm_gbps_per_core(x.sys.chip, l.cores_per_chip);
  StagePasses s;
  for (int r = 0; r < c.pp; ++r) {
    const int64_t layers = stage_layers(x, r), moe = stage_moe_layers(x, r);
    PassCost f = x.costs.dense_layer * double(layers - moe) + x.costs.moe_layer * double(moe);
    if (r == c.pp - 1) f = f + x.costs.ends;
    PassCost b = backward_of(f);
    const PassCost re = recompute_of(f, c.recompute);
    // Expert parallelism: dispatch and combine all-to-alls per MoE layer, twice more backward.
    const GroupPlacement epg = place_group(l, l.ep, int64_t(l.tp) * l.cp);
    const CommTime a2a_one = x.fab.all_to_all(epg, tokens / c.tp * x.m.moe.experts_per_token * x.m.hidden * 2);
    const double a2a = moe * a2a_one.time_ns;
    // Context parallelism: K and V of the rank's tokens go round the cp ring (cp-1 sends) under
    // the attention blocks; backward sends K, V and their gradients.
    const GroupPlacement cpg = place_group(l, l.cp, l.tp);
    const double kv = tokens * 2.0 * x.m.kv_heads * x.m.head_dim * 2.0 / c.tp;
    const bool cp_cross = cpg.nodes > 1;
    const double cp_send = c.cp > 1 ? (c.cp - 1) * x.fab.send(kv, cp_cross).time_ns * layers : 0.0;
    const double cp_fwd = std::max(0.0, cp_send - f.attention), cp_bwd = std::max(0.0, 2 * cp_send - b.attention);
    // ZeRO-3 gathers the stage's weights for the forward and again for the backward, and
    // reduce-scatters gradients every micro-batch; ZeRO-2 only the latter; both under compute.
    const RankParams p = rank_params(x.m, c, r);
    const DpTraffic t = dp_traffic(x, p);
    double z_fwd = 0, z_bwd = 0;
    if (c.zero == 3) {
      z_fwd = exposed(t.params.time_ns, f.total(), layers);
      z_bwd = exposed(t.params.time_ns + t.grads.time_ns, b.total(), layers);
    } else if (c.zero == 2) {
      z_bwd = exposed(t.grads.time_ns, b.total(), layers);
    }
    // Gradient accumulation over micro-batches: add each micro-batch's gradients into the buffer.
    const double accumulate = m > 1 ? p.total() * grad_bytes_per_param(c) * 3 / hbm : 0.0;
    const double fwd = (f.total() + a2a * 2 + cp_fwd + z_fwd) / v;
    const double bwd = (b.total() + re.total() + a2a * 2 + cp_bwd + z_bwd + accumulate) / v;
    s.fwd.push_back(fwd);
    s.bwd.push_back(bwd);
    s.comm_fwd.push_back((f.collective + a2a * 2 + cp_fwd + z_fwd) / v);
    s.comm_bwd.push_back((b.collective + re.collective + a2a * 2 + cp_bwd + z_bwd) / v);
    s.layers.push_back(layers);
    // Energy: every micro-batch's passes on each tensor-parallel group of the stage (dp x cp).
    const double groups = double(l.dp) * l.cp;
    // EP and CP traffic of every rank of the stage: 4 all-to-alls per MoE layer (dispatch and
    // combine, forward and backward), 3 (cp-1)-hop K/V rings per layer (as timed above). The
    // share over EFA: an all-to-all's peers on other nodes, a ring's hops that leave a node.
    const double ranks = double(l.tp) * l.dp * l.cp;
    const double ep_b = double(m) * moe * 4 * a2a_one.bytes_sent_per_rank * ranks;
    const double cp_b = c.cp > 1 ? double(m) * 3 * (c.cp - 1) * kv * layers * ranks : 0.0;
    s.ep_bytes += ep_b;
    s.ep_efa_bytes += epg.ranks > 1 ? ep_b * double(epg.ranks - epg.per_node) / (epg.ranks - 1) : 0.0;
    s.cp_bytes += cp_b;
    s.cp_efa_bytes += cp_cross ? cp_b * double(cpg.nodes) / cpg.ranks : 0.0;
    s.energy += (f.total_energy() + b.total_energy() + re.total_energy()) * (double(m) * groups);
    for (const PassCost* p : {&f, &b})
      if (p->total() > 0)
        s.peak_dynamic_w_per_chip = std::max(s.peak_dynamic_w_per_chip, p->total_energy().dynamic() / c.tp *
                                                                            l.cores_per_chip / (p->total() * 1e-9));
    if (r == 0) {
      s.recompute = re.total();
      s.tp = m * (f.collective + b.collective + re.collective);
      s.ep = m * a2a * 4;
      s.cp = m * 3 * cp_send;
    }
    // Per step: the reduction left after the last backward (ZeRO 0/1), the gathers after the
    // optimizer (ZeRO 1/2), or everything per micro-batch (ZeRO 3).
    const double micro = c.zero >= 2 ? double(m) : 1.0;
    const double zero3 = c.zero == 3 ? 2.0 : (c.zero >= 1 ? 1.0 : 0.0);
    s.dp_comm.push_back(c.zero >= 2 ? 0.0 : t.grads.time_ns);
    s.zero_gather.push_back(c.zero == 1 || c.zero == 2 ? t.params.time_ns : 0.0);
    s.dp_bytes.push_back(micro * t.grads.bytes_sent_per_rank + (c.zero == 3 ? micro * 2 : zero3) *
                                                                   t.params.bytes_sent_per_rank);
    const double n = double(l.dp) * l.cp;
    const double frac = (n - 1) / n;  // a rank's share of a ring's pieces
    const double elems = p.total() * frac * (c.zero == 0 ? 2.0 : 1.0);
    s.dp_elements.push_back(micro * elems + (c.zero == 3 ? micro * 2 : zero3) * p.total() * frac);
  }
  return s;
}

// Energy of `bytes` sent between chips, `efa_bytes` of them across nodes: both ends' HBM and one
// traversal of a NeuronLink or of the scale-out fabric.
UnitEnergy traffic_energy_split(const hw::SystemSpec& sys, double bytes, double efa_bytes) {
  UnitEnergy e;
  e[EnergyUnit::HBM] = 2 * bytes * sys.chip.energy.hbm_per_byte.value();
  e[EnergyUnit::EFA] = efa_bytes * sys.energy.scale_out_per_byte.value();
  e[EnergyUnit::NeuronLink] = (bytes - efa_bytes) * sys.chip.energy.link_per_byte.value();
  return e;
}

// Energy of `bytes` sent between chips: both ends' HBM and one traversal of a NeuronLink or,
// across nodes, of the scale-out fabric.
UnitEnergy traffic_energy(const hw::SystemSpec& sys, double bytes, bool across_nodes) {
  UnitEnergy e;
  e[EnergyUnit::HBM] = 2 * bytes * sys.chip.energy.hbm_per_byte.value();
  if (across_nodes) e[EnergyUnit::EFA] = bytes * sys.energy.scale_out_per_byte.value();
  else e[EnergyUnit::NeuronLink] = bytes * sys.chip.energy.link_per_byte.value();
  return e;
}

// The optimizer's energy on one rank: its HBM bytes and VectorE element operations.
UnitEnergy optimizer_energy(const TrainConfig& c, const hw::ChipSpec& chip, int cores_per_chip, double params) {
  const OptimizerCost o = optimizer_cost(c, chip, cores_per_chip, params);
  UnitEnergy e;
  e[EnergyUnit::HBM] = params * o.hbm_bytes_per_param * chip.energy.hbm_per_byte.value();
  e[EnergyUnit::VectorE] = params * o.vector_ops_per_param * chip.energy.vector_per_element.value() * chip.energy.dynamic_scale();
  return e;
}

}  // namespace

TrainStep train_step(const ModelDesc& model, const TrainConfig& c, const hw::SystemSpec& system,
                     const StepCostFactory& factory, const TrainConditions& cond) {
  TrainStep out;
  out.layout = make_layout(c, system);
  const TrainLayout& l = out.layout;
  const TrainFabric fab(system, l, cond.efa_oversubscription, cond.degraded_link);
  const LayerCosts costs = layer_costs(model, c, factory, system.chip, l.cores_per_chip);
  const Context x{model, c, l, system, fab, costs, model_stats(model)};
  StagePasses s = stage_passes(x);
  for (int r = 0; r < c.pp; ++r) {  // a straggler slows every synchronous pass
    s.fwd[r] = s.comm_fwd[r] + (s.fwd[r] - s.comm_fwd[r]) * cond.straggler_slowdown;
    s.bwd[r] = s.comm_bwd[r] + (s.bwd[r] - s.comm_bwd[r]) * cond.straggler_slowdown;
  }
  const int v = c.schedule == PipelineSchedule::Interleaved ? c.virtual_stages : 1;
  const GroupPlacement ppg = place_group(l, l.pp, int64_t(l.tp) * l.cp * l.dp);
  const double act = double(c.micro_batch) * c.seq / c.cp * model.hidden * 2.0 / c.tp;
  const double p2p = c.pp > 1 ? fab.send(act, ppg.nodes > 1).time_ns : 0.0;
  const PipelineTiming pt = time_pipeline(c.schedule, l.micro_batches, v, s.fwd, s.bwd, p2p);
  out.memory = memory_per_core(model, c, l, pt.peak_in_flight,
                               system.chip.hbm.capacity.value() / l.cores_per_chip);
  check_fits(out.memory, c, model.name);

  // The rank whose pipeline finishes last decides; rank 0 ends the step in every schedule here.
  double dp_exposed = 0, gather = 0, opt = 0;
  out.energy = s.energy;
  out.ep_energy = traffic_energy_split(system, s.ep_bytes, s.ep_efa_bytes);
  out.cp_energy = traffic_energy_split(system, s.cp_bytes, s.cp_efa_bytes);
  out.ep_bytes = s.ep_bytes, out.cp_bytes = s.cp_bytes;
  out.energy += out.ep_energy + out.cp_energy;
  const double stage_ranks = double(l.tp) * l.dp * l.cp;
  const bool dp_across = place_group(l, l.dp * l.cp, l.tp).nodes > 1;
  for (int r = 0; r < c.pp; ++r) {
    const double window = s.bwd[r] - s.comm_bwd[r];  // the last micro-batch's backward
    dp_exposed = std::max(dp_exposed, s.dp_comm[r] > 0 ? exposed(s.dp_comm[r], window, s.layers[r]) : 0.0);
    gather = std::max(gather, s.zero_gather[r]);
    const RankParams p = rank_params(model, c, r);
    const double owned = c.zero >= 1 ? p.dense / (double(l.dp) * l.cp) + p.expert / std::max(1.0, double(l.dp) * l.cp / l.ep)
                                     : p.total();
    opt = std::max(opt, optimizer_cost(c, system.chip, l.cores_per_chip, owned).time_ns);
    out.energy += optimizer_energy(c, system.chip, l.cores_per_chip, owned) * stage_ranks;
    out.energy += traffic_energy(system, s.dp_bytes[r] * stage_ranks, dp_across);
    if (s.dp_bytes[r] > out.dp_bytes_per_rank) {
      out.dp_bytes_per_rank = s.dp_bytes[r];
      out.dp_param_elements_per_rank = s.dp_elements[r];
    }
    out.dp_comm_ns = std::max(out.dp_comm_ns, s.dp_comm[r]);
  }
  const double peak = system.chip.peak_tflops(c.dtype == "fp8" ? numerics::DType::F8E4M3 : numerics::DType::BF16)
                          .value() * 1e12;
  fill_step_times(out, c, model, pt, {s.fwd, s.bwd, s.comm_fwd, s.comm_bwd, dp_exposed, gather, opt}, v, p2p, peak);
  out.recompute_ns = s.recompute;
  out.tp_comm_ns = s.tp, out.ep_comm_ns = s.ep, out.cp_comm_ns = s.cp;
  const double passes = double(l.micro_batches) * v;
  out.params_total = x.stats.total;
  out.fabric = fab.describe();
  // Pipeline sends: each micro-batch's activations (and their gradients) cross pp - 1 stage
  // boundaries on every rank of a stage; then every chip's static power over the step.
  if (c.pp > 1) out.energy += traffic_energy(system, act * 2 * passes * stage_ranks * (c.pp - 1), ppg.nodes > 1);
  const auto& en = system.chip.energy;
  const double static_w = en.modelled ? en.static_power.value() * en.voltage_scale : 0.0;
  out.energy[EnergyUnit::Static] = static_w * l.chips * out.step_ns * 1e-9;
  out.peak_power_w = (static_w + s.peak_dynamic_w_per_chip) * l.chips;
  return out;
}

}  // namespace trnsim::workloads
