// Runs a CompiledModel segment by segment on the simulator, as the runtime does (the runtime
// layer comes after the compiler, so its tests cannot use it): functional outputs, and the
// model's latency as the sum of its segments' simulated times.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "trnsim/compiler/compiled_model.h"
#include "trnsim/core/run.h"
#include "trnsim/hw/chip_spec.h"

namespace trnsim::compiler::testing {

struct CompiledRun {
  std::map<std::string, std::vector<float>> outputs;
  double time_s = 0;
};

inline CompiledRun run_compiled(const CompiledModel& cm, const hw::ChipSpec& chip,
                                const std::map<std::string, std::vector<float>>& inputs,
                                core::Mode mode = core::Mode::Functional) {
  std::map<std::string, std::vector<float>> env = inputs;
  for (const auto& [name, t] : cm.graph.tensors)
    if (t.is_const()) env[name] = std::vector<float>(t.data->begin(), t.data->end());
  CompiledRun r;
  core::RunOptions o;
  o.mode = mode;
  o.record_instructions = false;
  for (const auto& s : cm.segments) {
    if (s.kind == Segment::Kind::Alias) {
      if (mode == core::Mode::Functional) env[s.writes[0]] = env.at(s.reads[0]);
      continue;
    }
    std::map<std::string, std::vector<float>> in;
    if (mode == core::Mode::Functional)
      for (const auto& n : s.reads) in[n] = env.at(n);
    auto res = core::run(s.program, chip, in, o);
    r.time_s += res.total.ms() * 1e-3;
    if (mode == core::Mode::Functional)
      for (const auto& n : s.writes) env[n] = res.outputs.at(n);
  }
  if (mode == core::Mode::Functional)
    for (const auto& n : cm.outputs) r.outputs[n] = env.at(n);
  return r;
}

}  // namespace trnsim::compiler::testing
