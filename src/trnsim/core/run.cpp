#include "trnsim/core/run.h"

#include <algorithm>

#include "trnsim/core/chip.h"
#include "trnsim/isa/validate.h"

namespace trnsim::core {

const UnitStats* RunResult::unit(uint16_t core, isa::Engine e, uint16_t queue) const {
  for (const auto& u : units)
    if (u.unit.core == core && u.unit.engine == e && (e != isa::Engine::Dma || u.unit.queue == queue)) return &u;
  return nullptr;
}

std::map<std::string, double> RunResult::energy_by_unit() const {
  std::map<std::string, double> m;
  if (!energy.modelled) return m;
  for (const char* k : {"TensorE", "VectorE", "ScalarE", "GpSimd", "DMA"}) m[k] = 0;
  for (const auto& u : units) m[std::string(isa::engine_name(u.unit.engine))] += u.energy_j;
  m["HBM"] = energy.hbm_j;
  m["static"] = energy.static_j;
  return m;
}

std::vector<std::pair<sim::Time, double>> RunResult::power_samples() const {
  std::vector<std::pair<sim::Time, double>> out;
  for (size_t i = 0; i < energy.bins_j.size(); ++i) {
    const int64_t start = static_cast<int64_t>(i) * energy.bin_ps;
    const int64_t width = std::min(energy.bin_ps, total.ps() - start);
    if (width <= 0) break;
    out.emplace_back(sim::Time::ps(start), energy.static_w + energy.bins_j[i] / (static_cast<double>(width) * 1e-12));
  }
  return out;
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
