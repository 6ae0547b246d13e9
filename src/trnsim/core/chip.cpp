#include "trnsim/core/chip.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/core/dma_queue.h"
#include "trnsim/core/neuron_core.h"

namespace trnsim::core {

using sim::Time;

Chip::Chip(const hw::ChipSpec& spec, const isa::Program& program, const RunOptions& opts,
           const InputViews& inputs)
    : spec_(spec),
      program_(program),
      opts_(opts),
      sems_(queue_, program.semaphores),
      net_(queue_, &Chip::on_flow_done, this),
      hbm_(program, opts.mode == Mode::Functional, inputs),
      energy_(spec.energy) {
  hbm_res_ = net_.add_resource("hbm", spec.hbm.bandwidth);
  sem_latency_ = Time::from(spec.core.semaphore_latency, "core.semaphore_latency");
  if (opts.record_instructions) records_.reserve(program.instruction_count());
  for (size_t c = 0; c < program.cores.size(); ++c)
    cores_.push_back(std::make_unique<NeuronCore>(*this, static_cast<int>(c), program.cores[c]));
}

Chip::~Chip() = default;

void Chip::on_flow_done(void*, Time now, uint64_t tag) {
  reinterpret_cast<DmaQueue*>(tag)->flow_done(now);
}

void Chip::run() {
  for (auto& c : cores_)
    for (auto& u : c->units()) u->start();
  queue_.run();
  std::string blocked;
  for (auto& c : cores_)
    for (auto& u : c->units())
      if (!u->finished()) blocked += "\n  " + u->blocked_reason();
  if (!blocked.empty())
    throw Error(fmt::format("program '{}' deadlocked at {:.3f} us: no instruction can issue{}",
                            program_.name, queue_.now().us(), blocked));
}

EnergyReport Chip::energy_report(const RunResult& r) const {
  EnergyReport e;
  e.modelled = energy_.modelled();
  if (!e.modelled) return e;
  e.static_w = energy_.static_power_w();
  e.static_j = e.static_w * r.total.ps() * 1e-12;
  e.hbm_j = hbm_energy_j_;
  e.total_j = e.static_j + e.hbm_j;
  for (const auto& u : r.units) e.total_j += u.energy_j;
  e.bin_ps = timeline_.bin_ps();
  e.bins_j = timeline_.bins_j();
  e.peak_w = e.static_w + timeline_.peak_w(r.total.ps());
  return e;
}

RunResult Chip::result() {
  RunResult r;
  r.total = last_end_;
  r.events = queue_.events_processed();
  r.hbm_bytes = net_.bytes_through(hbm_res_);
  for (auto& c : cores_)
    for (auto& u : c->units()) {
      const auto& k = u->counters();
      if (k.instructions == 0) continue;
      r.units.push_back(UnitStats{u->id(), k.busy_ps, k.instructions, k.flops, k.bytes, k.energy_j});
      r.instructions += k.instructions;
      if (u->id().engine == isa::Engine::Tensor) r.tensor_flops += k.flops;
    }
  r.energy = energy_report(r);
  if (functional())
    for (uint32_t i = 0; i < program_.tensors.size(); ++i)
      if (program_.tensors[i].kind == isa::HbmTensor::Kind::Output)
        r.outputs[program_.tensors[i].name] = hbm_.read(i);
  r.records = std::move(records_);
  return r;
}

}  // namespace trnsim::core
