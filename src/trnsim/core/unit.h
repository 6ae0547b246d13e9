// A unit that runs one in-order instruction stream: a compute engine or a DMA queue. The base
// class does the sequencing shared by all of them: wait for the semaphores, issue, complete,
// signal. An instruction whose waits are already met when its unit becomes free is issued
// without a trip through the event queue (semaphores only grow, so a met wait stays met);
// only unmet waits and asynchronous completions (DMA) cost events.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "trnsim/isa/program.h"
#include "trnsim/sim/event_queue.h"
#include "trnsim/sim/stats.h"

namespace trnsim::core {

class Chip;
class NeuronCore;

class Unit : public sim::Handler {
 public:
  Unit(Chip& chip, NeuronCore& core, isa::UnitId id, const std::vector<isa::Instruction>& stream);
  const isa::UnitId& id() const { return id_; }
  void start();                        // schedule the first issue at time 0
  void wake(sim::Time now);            // a semaphore it waits on has grown
  void on_event(sim::Time now, uint64_t arg) override;
  bool finished() const { return pc_ >= stream_.size() && !busy_; }
  std::string blocked_reason() const;  // for deadlock reports
  const sim::UnitCounters& counters() const { return counters_; }

 protected:
  // Starts `ins` at `t` (unit free, waits met). Returns its end time, or Time::max() when the
  // unit will call complete() itself later (asynchronous units: DMA).
  virtual sim::Time begin(const isa::Instruction& ins, sim::Time t) = 0;
  void complete(sim::Time end);        // for asynchronous units

  Chip& chip_;
  NeuronCore& core_;

 private:
  void run_from(sim::Time now);
  void retire(sim::Time start, sim::Time end);

  isa::UnitId id_;
  const std::vector<isa::Instruction>& stream_;
  size_t pc_ = 0;
  bool busy_ = false;
  bool started_ = false;
  bool shares_ports_ = false;  // may need a shared SBUF/PSUM port (NeuronCore-v2)
  sim::Time free_at_;
  sim::Time start_;
  sim::UnitCounters counters_;
};

}  // namespace trnsim::core
