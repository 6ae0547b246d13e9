#include "trnsim/report/summary.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "trnsim/report/op_facts.h"

namespace trnsim::report {
namespace {

// Fraction of [0, total] covered by the union of the DMA intervals of one core.
double union_fraction(std::vector<std::pair<int64_t, int64_t>> iv, int64_t total_ps) {
  if (iv.empty() || total_ps <= 0) return 0;
  std::sort(iv.begin(), iv.end());
  int64_t covered = 0, lo = iv[0].first, hi = iv[0].second;
  for (size_t i = 1; i < iv.size(); ++i) {
    if (iv[i].first > hi) {
      covered += hi - lo;
      lo = iv[i].first;
    }
    hi = std::max(hi, iv[i].second);
  }
  covered += hi - lo;
  return static_cast<double>(covered) / static_cast<double>(total_ps);
}

void count_instructions(const isa::Program& p, RunSummary& s, std::map<numerics::DType, double>& mm) {
  auto visit = [&](const std::vector<isa::Instruction>& stream, isa::Engine e) {
    for (const auto& ins : stream) {
      ++s.opcode_counts[isa::op_name(ins.op)];
      ++s.engine_counts[std::string(isa::engine_name(e))];
      if (const auto* m = std::get_if<isa::Matmul>(&ins.op)) mm[m->stationary.dtype] += isa::op_flops(ins.op);
      if (const auto* m = std::get_if<isa::MatmulMx>(&ins.op))
        mm[isa::mx_block_dtype(m->stationary.dtype).value_or(m->stationary.dtype)] += isa::op_flops(ins.op);
    }
  };
  for (const auto& cp : p.cores) {
    if (cp.instruction_count() > 0) ++s.cores_used;
    for (int e = 0; e < isa::kComputeEngines; ++e) visit(cp.engines[e], static_cast<isa::Engine>(e));
    for (const auto& q : cp.dma_queues) visit(q, isa::Engine::Dma);
  }
}

}  // namespace

EnergySummary summarize_energy(const core::RunResult& r) {
  EnergySummary e;
  e.modelled = r.energy.modelled;
  if (!e.modelled) return e;
  e.energy_j = r.energy.total_j;
  e.average_power_w = r.energy.average_w(r.total);
  e.peak_power_w = std::max(r.energy.peak_w, e.average_power_w);
  e.by_unit_j = r.energy_by_unit();
  return e;
}

RunSummary summarize(const isa::Program& program, const core::RunResult& r, const hw::ChipSpec& chip) {
  RunSummary s;
  s.program = program.name;
  s.chip = chip.name;
  s.time_s = r.total.ns() * 1e-9;
  s.instructions = r.instructions;
  s.events = r.events;

  std::map<numerics::DType, double> matmul_flops;
  count_instructions(program, s, matmul_flops);
  const int cores = std::max(1, s.cores_used);

  const int64_t total_ps = r.total.ps();
  for (const auto& u : r.units) {
    UnitUtilisation x;
    x.unit = u.unit.name();
    x.core = u.unit.core;
    x.engine = u.unit.engine;
    x.queue = u.unit.queue;
    x.busy_s = static_cast<double>(u.busy_ps) * 1e-12;
    x.utilisation = total_ps > 0 ? static_cast<double>(u.busy_ps) / static_cast<double>(total_ps) : 0;
    x.instructions = u.instructions;
    x.flops = u.flops;
    x.bytes = u.bytes;
    x.energy_j = u.energy_j;
    s.units.push_back(std::move(x));
  }
  std::sort(s.units.begin(), s.units.end(), [](const UnitUtilisation& a, const UnitUtilisation& b) {
    return std::tie(a.core, a.engine, a.queue) < std::tie(b.core, b.engine, b.queue);
  });

  std::vector<std::vector<std::pair<int64_t, int64_t>>> dma(program.cores.size());
  for (const auto& rec : r.records)
    if (rec.engine == isa::Engine::Dma && rec.core < dma.size()) dma[rec.core].push_back({rec.start_ps, rec.end_ps});
  if (!r.records.empty())
    for (auto& iv : dma) s.dma_active.push_back(union_fraction(std::move(iv), total_ps));

  // TensorE: the peak of the dtype that carries most of the matmul work.
  // Matmul FLOPs only: TensorE transposes move data (the simulator counts them as identity
  // matmuls in RunResult::tensor_flops), they are not work a user asked for.
  for (const auto& [dt, f] : matmul_flops) s.tensor_flops += f;
  s.tflops = s.time_s > 0 ? s.tensor_flops / s.time_s * 1e-12 : 0;
  if (!matmul_flops.empty()) {
    s.has_matmul = true;
    s.matmul_dtype = std::max_element(matmul_flops.begin(), matmul_flops.end(),
                                      [](auto& a, auto& b) { return a.second < b.second; })->first;
    if (chip.supports(s.matmul_dtype)) {
      s.peak_tflops = chip.clock_derived_tflops(s.matmul_dtype).value() * cores / chip.neuron_cores;
      s.peak_fraction = s.peak_tflops > 0 ? s.tflops / s.peak_tflops : 0;
      s.roofline_knee = chip.roofline_knee(s.matmul_dtype);
    }
  }

  // HBM: the chip's bandwidth is shared by all cores; each core's DMA engines cap its share.
  s.hbm_bytes = r.hbm_bytes;
  s.bandwidth_gbps = s.time_s > 0 ? s.hbm_bytes / (s.time_s * 1e9) : 0;
  s.hbm_bandwidth_gbps = chip.hbm.bandwidth.value();
  s.dma_bandwidth_gbps = chip.core.dma.bandwidth_per_engine.value() * chip.core.dma.engines * cores;
  double reachable = std::min(s.hbm_bandwidth_gbps, s.dma_bandwidth_gbps);
  s.bandwidth_fraction = reachable > 0 ? s.bandwidth_gbps / reachable : 0;

  s.arithmetic_intensity = s.hbm_bytes > 0 ? s.tensor_flops / s.hbm_bytes : 0;
  if (s.has_matmul && s.roofline_knee > 0)
    s.bound = s.arithmetic_intensity >= s.roofline_knee ? "compute" : "memory";
  s.energy = summarize_energy(r);
  return s;
}

}  // namespace trnsim::report
