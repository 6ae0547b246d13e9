#include "trnsim/runtime/loaded_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <set>

#include "trnsim/common/error.h"

namespace trnsim::runtime {

LoadedModel::LoadedModel(const compiler::CompiledModel& model, const hw::ChipSpec& chip, bool overlap) : model_(model), chip_(chip) {
  std::set<std::string> device_reads;  // what the chip reads holds fp32
  for (const auto& seg : model.segments)
    if (seg.kind == compiler::Segment::Kind::Kernel) device_reads.insert(seg.reads.begin(), seg.reads.end());
  for (const auto& [name, t] : model.graph.tensors) {
    if (!t.is_const()) continue;
    // An integer past 2^24 is not exact in fp32: refused as an input of that size is, never
    // silently rounded (16777217 became 16777216).
    if (compiler::is_integral(t.type) && device_reads.count(name))
      for (double v : *t.data)
        if (std::isfinite(v) && std::fabs(v) > 16777216.0)  // +-inf: a rewrite's exact sentinel
          throw UnsupportedError(fmt::format("unsupported: constant '{}' holds the integer {}, beyond 2^24 (the chip holds it as fp32)",
                                             name, v));
  }
  linked_ = link_segments(model, overlap);
  for (size_t si : linked_.kernel_segment) {
    const isa::Program& p = model.segments[si].program;
    KernelFacts f;
    f.instructions = p.instruction_count();
    for (const auto& c : p.cores) {
      for (const auto& ins : c.stream(isa::Engine::Tensor)) f.tensor_flops += isa::op_flops(ins.op);
      for (const auto& q : c.dma_queues)
        for (const auto& ins : q)
          if (const auto* d = std::get_if<isa::Dma>(&ins.op); d && (d->src.space == isa::Space::HBM || d->dst.space == isa::Space::HBM))
            f.hbm_bytes += static_cast<double>(d->dst.bytes());
    }
    facts_.push_back(f);
  }
}

namespace {
// Folds one kernel's energy into the model's report; its power samples start at t_s.
void add_energy(Report& r, const core::RunResult& res, double t_s, bool samples) {
  if (!res.energy.modelled) return;
  for (const auto& [k, j] : res.energy_by_unit()) r.energy_by_unit_j[k] += j;
  r.energy_j += res.energy.total_j;
  r.peak_power_w = std::max({r.peak_power_w, res.energy.peak_w, res.energy.average_w(res.total)});
  if (samples)
    for (const auto& [start, w] : res.power_samples()) r.power_w.emplace_back(t_s + start.ps() * 1e-12, w);
}
}  // namespace

const std::map<std::string, std::vector<float>>& LoadedModel::constants() const {
  std::call_once(constants_->once, [&] {
    for (const auto& [name, t] : model_.graph.tensors)
      if (t.is_const()) constants_->values[name] = t.data->floats();  // from the constant's own type
  });
  return constants_->values;
}

RunOutput LoadedModel::run(const std::map<std::string, std::vector<float>>& inputs, core::Mode mode, bool timeline) const {
  const auto wall0 = std::chrono::steady_clock::now();
  const bool functional = mode == core::Mode::Functional;
  RunOutput out;
  Report& r = out.report;
  r.chip = chip_.name;
  r.mode = functional ? "functional" : "timing";
  r.compile_time_s = model_.compile_time_s;
  r.hbm_plan = model_.hbm;
  if (functional)
    for (const auto& name : model_.inputs) {
      auto it = inputs.find(name);
      if (it == inputs.end()) throw ShapeError(fmt::format("input '{}' is missing", name));
      const int64_t want = compiler::numel(model_.shapes.at(name));
      if (static_cast<int64_t>(it->second.size()) != want)
        throw ShapeError(fmt::format("input '{}' has {} values, the compiled model expects {} (shape {})", name,
                                     it->second.size(), want, compiler::shape_str(model_.shapes.at(name))));
    }
  auto value = [&](const std::string& n) -> const std::vector<float>& {
    if (auto c = constants().find(n); c != constants().end()) return c->second;
    auto e = inputs.find(n);
    if (e == inputs.end()) throw Error(fmt::format("runtime: tensor '{}' has no value", n));
    return e->second;
  };
  core::InputViews in;
  if (functional)
    for (const auto& t : linked_.program.tensors)
      if (t.kind == isa::HbmTensor::Kind::Input) in.emplace(t.name, std::span<const float>(value(t.name)));
  core::RunOptions ro;
  ro.mode = mode;
  ro.record_instructions = true;  // per-op attribution
  ro.validate = false;            // the builder already checked every kernel's instructions
  core::RunResult res = core::run_views(linked_.program, chip_, in, ro);

  // Per kernel: span of its instructions; its share is how far it moved the running end.
  const size_t nk = linked_.kernel_segment.size();
  std::vector<double> start(nk, std::numeric_limits<double>::infinity()), end(nk, 0.0);
  for (const auto& rec : res.records) {
    const size_t k = linked_.kernel_of(rec.core, rec.engine, rec.queue, rec.index);
    start[k] = std::min(start[k], static_cast<double>(rec.start_ps) * 1e-12);
    end[k] = std::max(end[k], static_cast<double>(rec.end_ps) * 1e-12);
    if (timeline) {
      const auto& ins = core::RunResult::instruction(linked_.program, rec);
      if (!std::holds_alternative<isa::Nop>(ins.op))
        r.timeline.push_back({model_.segments[linked_.kernel_segment[k]].node, isa::UnitId{rec.core, rec.engine, rec.queue},
                              static_cast<double>(rec.start_ps) * 1e-12, static_cast<double>(rec.end_ps) * 1e-12, isa::op_name(ins.op)});
    }
  }
  double running = 0;
  for (size_t k = 0; k < nk; ++k) {
    const compiler::Segment& s = model_.segments[linked_.kernel_segment[k]];
    if (!std::isfinite(start[k])) start[k] = end[k] = running;
    OpTime op{s.node, s.op, s.fused, std::max(0.0, end[k] - running), facts_[k].instructions, facts_[k].tensor_flops, facts_[k].hbm_bytes};
    op.start_s = start[k];
    op.end_s = end[k];
    op.overlap_s = std::max(0.0, std::min(end[k], running) - start[k]);
    running = std::max(running, end[k]);
    r.tensor_flops += op.tensor_flops;
    r.instructions += op.instructions;
    r.overlap_s += op.overlap_s;
    r.ops.push_back(std::move(op));
  }
  r.time_s = res.total.ms() * 1e-3;
  r.hbm_bytes = res.hbm_bytes;
  add_energy(r, res, 0.0, timeline);
  r.prefetched_loads = linked_.prefetched_loads;
  std::map<isa::Engine, double> busy;
  std::map<isa::Engine, std::set<std::pair<uint16_t, uint16_t>>> units;
  for (const auto& u : res.units) {
    busy[u.unit.engine] += static_cast<double>(u.busy_ps) * 1e-12;
    units[u.unit.engine].insert({u.unit.core, u.unit.queue});
  }
  const double t = r.time_s;
  for (const auto& [e, b] : busy) {
    double n = static_cast<double>(std::max<size_t>(1, units[e].size()));
    r.engines.push_back({std::string(isa::engine_name(e)), b, t > 0 ? b / (t * n) : 0});
  }
  if (functional)
    for (const auto& o : model_.outputs) {
      const std::string c = linked_.canonical.count(o) ? linked_.canonical.at(o) : o;
      auto it = res.outputs.find(c);
      out.outputs[o] = it != res.outputs.end() ? it->second : value(c);
      // An empty tensor is held as one element in HBM (a tensor needs at least one).
      // (only ever shrinks: the shape's count never exceeds what was computed)
      const auto want = static_cast<size_t>(compiler::numel(model_.shapes.at(o)));
      if (want < out.outputs[o].size()) out.outputs[o].resize(want);
    }
  r.sim_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return out;
}

}  // namespace trnsim::runtime
