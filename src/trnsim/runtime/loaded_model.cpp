#include "trnsim/runtime/loaded_model.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <set>

#include "trnsim/common/error.h"

namespace trnsim::runtime {

using compiler::Segment;

LoadedModel::LoadedModel(const compiler::CompiledModel& model, const hw::ChipSpec& chip) : model_(model), chip_(chip) {
  std::set<std::string> device_reads;  // what the chip reads holds fp32
  for (const auto& seg : model.segments)
    if (seg.kind == Segment::Kind::Kernel) device_reads.insert(seg.reads.begin(), seg.reads.end());
  for (const auto& [name, t] : model.graph.tensors) {
    if (!t.is_const()) continue;
    // An integer past 2^24 is not exact in fp32: refused as an input of that size is, never
    // silently rounded (16777217 became 16777216).
    if (compiler::is_integral(t.type) && device_reads.count(name))
      for (double v : *t.data)
        if (std::fabs(v) > 16777216.0)
          throw UnsupportedError(fmt::format("unsupported: constant '{}' holds the integer {}, beyond 2^24 (the chip holds it as fp32)",
                                             name, v));
    constants_[name] = std::vector<float>(t.data->begin(), t.data->end());
  }
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
  // Values of the tensors computed so far (functional mode); constants are read in place.
  std::map<std::string, std::vector<float>> env;
  if (functional) {
    for (const auto& name : model_.inputs) {
      auto it = inputs.find(name);
      if (it == inputs.end()) throw ShapeError(fmt::format("input '{}' is missing", name));
      const int64_t want = compiler::numel(model_.shapes.at(name));
      if (static_cast<int64_t>(it->second.size()) != want)
        throw ShapeError(fmt::format("input '{}' has {} values, the compiled model expects {} (shape {})", name,
                                     it->second.size(), want, compiler::shape_str(model_.shapes.at(name))));
      env[name] = it->second;
    }
  }
  auto value = [&](const std::string& n) -> const std::vector<float>& {
    if (auto c = constants_.find(n); c != constants_.end()) return c->second;
    auto e = env.find(n);
    if (e == env.end()) throw Error(fmt::format("runtime: tensor '{}' read before it was computed", n));
    return e->second;
  };
  std::map<isa::Engine, double> busy;
  std::map<isa::Engine, std::set<std::pair<uint16_t, uint16_t>>> units;
  double t = 0;
  core::RunOptions ro;
  ro.mode = mode;
  ro.record_instructions = timeline;
  ro.validate = false;  // the builder already checked every instruction it emitted
  for (const Segment& s : model_.segments) {
    if (s.kind == Segment::Kind::Alias) {
      if (functional) env[s.writes[0]] = value(s.alias_of);
      continue;
    }
    core::InputViews in;
    if (functional)
      for (const auto& n : s.reads) in.emplace(n, std::span<const float>(value(n)));
    core::RunResult res = core::run_views(s.program, chip_, in, ro);
    OpTime op{s.node, s.op, s.fused, res.total.ms() * 1e-3, res.instructions, res.tensor_flops, res.hbm_bytes};
    for (const auto& u : res.units) {
      busy[u.unit.engine] += static_cast<double>(u.busy_ps) * 1e-12;
      units[u.unit.engine].insert({u.unit.core, u.unit.queue});
    }
    if (timeline)
      for (const auto& rec : res.records) {
        const auto& ins = core::RunResult::instruction(s.program, rec);
        r.timeline.push_back({s.node, isa::UnitId{rec.core, rec.engine, rec.queue}, t + static_cast<double>(rec.start_ps) * 1e-12,
                              t + static_cast<double>(rec.end_ps) * 1e-12, isa::op_name(ins.op)});
      }
    t += op.time_s;
    r.hbm_bytes += op.hbm_bytes;
    r.tensor_flops += op.tensor_flops;
    r.instructions += op.instructions;
    r.ops.push_back(std::move(op));
    if (functional)
      for (const auto& n : s.writes) {
        auto it = res.outputs.find(n);
        if (it == res.outputs.end()) throw Error(fmt::format("runtime: kernel '{}' did not produce '{}'", s.node, n));
        env[n] = std::move(it->second);
      }
  }
  r.time_s = t;
  for (const auto& [e, b] : busy) {
    double n = static_cast<double>(std::max<size_t>(1, units[e].size()));
    r.engines.push_back({std::string(isa::engine_name(e)), b, t > 0 ? b / (t * n) : 0});
  }
  if (functional)
    for (const auto& o : model_.outputs) {
      out.outputs[o] = value(o);
      // An empty tensor is held as one element in HBM (a tensor needs at least one).
      // (only ever shrinks: the shape's count never exceeds what was computed)
      const auto want = static_cast<size_t>(compiler::numel(model_.shapes.at(o)));
      if (want < out.outputs[o].size()) out.outputs[o].resize(want);
    }
  r.sim_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return out;
}

}  // namespace trnsim::runtime
