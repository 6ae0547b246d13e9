// A chip: its NeuronCores, the HBM they share, the semaphores and the event queue of a run.
// Built for one Program and run once (core/run.h is the public entry point).
#pragma once
#include <memory>
#include <vector>

#include "trnsim/core/energy_model.h"
#include "trnsim/core/hbm.h"
#include "trnsim/core/power_timeline.h"
#include "trnsim/core/run.h"
#include "trnsim/core/semaphores.h"
#include "trnsim/hw/chip_spec.h"
#include "trnsim/sim/bandwidth.h"
#include "trnsim/sim/event_queue.h"

namespace trnsim::core {

class NeuronCore;

class Chip {
 public:
  Chip(const hw::ChipSpec& spec, const isa::Program& program, const RunOptions& opts,
       const InputViews& inputs);
  ~Chip();

  // Runs every stream to completion. Throws Error listing the blocked units on a deadlock.
  void run();
  RunResult result();

  const hw::ChipSpec& spec() const { return spec_; }
  const isa::Program& program() const { return program_; }
  bool functional() const { return opts_.mode == Mode::Functional; }
  bool record_instructions() const { return opts_.record_instructions; }
  sim::EventQueue& queue() { return queue_; }
  Semaphores& semaphores() { return sems_; }
  sim::BandwidthNetwork& network() { return net_; }
  Hbm& hbm() { return hbm_; }
  int hbm_resource() const { return hbm_res_; }
  std::vector<InstructionRecord>& records() { return records_; }
  sim::Time semaphore_latency() const { return sem_latency_; }
  void note_end(sim::Time t) { if (last_end_ < t) last_end_ = t; }
  const EnergyModel& energy_model() const { return energy_; }
  // An instruction's dynamic energy: its unit's part and the HBM accesses it caused.
  void add_energy(sim::Time start, sim::Time end, double unit_j, double hbm_j) {
    hbm_energy_j_ += hbm_j;
    timeline_.add(start.ps(), end.ps(), unit_j + hbm_j);
  }

 private:
  static void on_flow_done(void* ctx, sim::Time now, uint64_t tag);
  EnergyReport energy_report(const RunResult& r) const;

  const hw::ChipSpec& spec_;
  const isa::Program& program_;
  RunOptions opts_;
  sim::EventQueue queue_;
  Semaphores sems_;
  sim::BandwidthNetwork net_;
  Hbm hbm_;
  int hbm_res_ = -1;
  sim::Time sem_latency_;
  sim::Time last_end_;
  std::vector<InstructionRecord> records_;
  EnergyModel energy_;
  PowerTimeline timeline_;
  double hbm_energy_j_ = 0;
  std::vector<std::unique_ptr<NeuronCore>> cores_;
};

}  // namespace trnsim::core
