#include "trnsim/core/run.h"

#include "trnsim/core/chip.h"
#include "trnsim/isa/validate.h"

namespace trnsim::core {

const UnitStats* RunResult::unit(uint16_t core, isa::Engine e, uint16_t queue) const {
  for (const auto& u : units)
    if (u.unit.core == core && u.unit.engine == e && (e != isa::Engine::Dma || u.unit.queue == queue)) return &u;
  return nullptr;
}

const isa::Instruction& RunResult::instruction(const isa::Program& p, const InstructionRecord& r) {
  const auto& core = p.cores.at(r.core);
  if (r.engine == isa::Engine::Dma) return core.dma_queues.at(r.queue).at(r.index);
  return core.stream(r.engine).at(r.index);
}

RunResult run(const isa::Program& program, const hw::ChipSpec& chip,
              const std::map<std::string, std::vector<float>>& inputs, const RunOptions& options) {
  InputViews views;
  for (const auto& [name, v] : inputs) views.emplace(name, std::span<const float>(v));
  return run_views(program, chip, views, options);
}

RunResult run_views(const isa::Program& program, const hw::ChipSpec& chip, const InputViews& inputs,
                    const RunOptions& options) {
  if (options.validate) isa::validate(program, chip);
  Chip c(chip, program, options, inputs);
  c.run();
  return c.result();
}

}  // namespace trnsim::core
