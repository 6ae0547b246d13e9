// A chip: its NeuronCores, the HBM they share, the semaphores and the event queue of a run.
// Built for one Program and run once (core/run.h is the public entry point).
#pragma once
#include <memory>
#include <vector>

#include "trnsim/core/hbm.h"
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

 private:
  static void on_flow_done(void* ctx, sim::Time now, uint64_t tag);

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
  std::vector<std::unique_ptr<NeuronCore>> cores_;
};

}  // namespace trnsim::core
