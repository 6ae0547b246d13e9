#include "trnsim/core/unit.h"

#include <fmt/format.h>

#include "trnsim/core/chip.h"
#include "trnsim/core/neuron_core.h"

namespace trnsim::core {

using sim::Time;

void Semaphores::on_event(Time now, uint64_t s) {
  ++value_[s];
  if (waiters_[s].empty()) return;
  scratch_.swap(waiters_[s]);
  for (Unit* u : scratch_) u->wake(now);
  scratch_.clear();
}

Unit::Unit(Chip& chip, NeuronCore& core, isa::UnitId id, const std::vector<isa::Instruction>& stream)
    : chip_(chip), core_(core), id_(id), stream_(stream), shares_ports_(core.shares_ports(id.engine)) {}

void Unit::start() {
  if (!stream_.empty()) chip_.queue().schedule(Time(), this, 0);
}

void Unit::wake(Time now) { run_from(now); }

void Unit::on_event(Time now, uint64_t) { run_from(now); }

void Unit::run_from(Time now) {
  if (busy_) return;
  Time t = sim::max(now, free_at_);
  Semaphores& sems = chip_.semaphores();
  while (pc_ < stream_.size()) {
    const isa::Instruction& ins = stream_[pc_];
    for (int w = 0; w < ins.sync.num_waits; ++w) {
      const isa::Wait& wt = ins.sync.waits[w];
      if (!sems.met(wt.semaphore, wt.value)) {
        sems.add_waiter(wt.semaphore, this);
        return;
      }
    }
    // A shared port (NeuronCore-v2) is requested in simulated-time order (from an event at the
    // request time, not ahead of the clock) and granted first come, first served: the
    // instruction starts when the engines that asked before it have released the port.
    const uint8_t ports = shares_ports_ ? core_.ports(id_.engine, ins.op) : 0;
    if (ports) {
      if (t > now) { chip_.queue().schedule(t, this, 0); return; }
      t = sim::max(t, core_.ports_free_at(ports));
    }
    start_ = t;
    busy_ = true;
    Time end = begin(ins, t);
    if (ports) core_.hold_ports(ports, end);
    if (end == Time::max()) return;  // asynchronous: complete() follows
    retire(t, end);
    t = end;
  }
}

void Unit::retire(Time start, Time end) {
  const isa::Instruction& ins = stream_[pc_];
  busy_ = false;
  free_at_ = end;
  counters_.busy_ps += (end - start).ps();
  ++counters_.instructions;
  counters_.flops += isa::op_flops(ins.op);
  counters_.bytes += isa::op_bytes(ins.op);
  if (chip_.energy_model().modelled()) {
    const InstructionEnergy e = chip_.energy_model().of(ins.op, id_.engine);
    counters_.energy_j += e.unit_j;
    chip_.add_energy(start, end, e.unit_j, e.hbm_j);
  }
  if (chip_.record_instructions())
    chip_.records().push_back({start.ps(), end.ps(), static_cast<uint32_t>(pc_), id_.core, id_.engine, id_.queue});
  if (ins.sync.signal >= 0)
    chip_.semaphores().signal_at(end + chip_.semaphore_latency(), static_cast<uint32_t>(ins.sync.signal));
  chip_.note_end(end);
  ++pc_;
}

void Unit::complete(Time end) {
  retire(start_, end);
  run_from(end);
}

std::string Unit::blocked_reason() const {
  if (pc_ >= stream_.size()) return "";
  const isa::Instruction& ins = stream_[pc_];
  std::string waits;
  for (int w = 0; w < ins.sync.num_waits; ++w) {
    const auto& wt = ins.sync.waits[w];
    if (!chip_.semaphores().met(wt.semaphore, wt.value))
      waits += fmt::format(" semaphore {} >= {} (is {})", wt.semaphore, wt.value,
                           chip_.semaphores().value(wt.semaphore));
  }
  return fmt::format("{} at instruction #{} ({}) waits on{}", id_.name(), pc_, isa::op_name(ins.op), waits);
}

}  // namespace trnsim::core
