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
      hbm_(program, opts.mode == Mode::Functional, inputs) {
  hbm_res_ = net_.add_resource("hbm", spec.hbm.bandwidth);
  sem_latency_ = Time::from(spec.core.semaphore_latency);
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

RunResult Chip::result() {
  RunResult r;
  r.total = last_end_;
  r.events = queue_.events_processed();
  r.hbm_bytes = net_.bytes_through(hbm_res_);
  for (auto& c : cores_)
    for (auto& u : c->units()) {
      const auto& k = u->counters();
      if (k.instructions == 0) continue;
      r.units.push_back(UnitStats{u->id(), k.busy_ps, k.instructions, k.flops, k.bytes});
      r.instructions += k.instructions;
      if (u->id().engine == isa::Engine::Tensor) r.tensor_flops += k.flops;
    }
  if (functional())
    for (uint32_t i = 0; i < program_.tensors.size(); ++i)
      if (program_.tensors[i].kind == isa::HbmTensor::Kind::Output)
        r.outputs[program_.tensors[i].name] = hbm_.read(i);
  r.records = std::move(records_);
  return r;
}

}  // namespace trnsim::core
