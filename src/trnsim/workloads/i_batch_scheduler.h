// What one engine iteration runs: which sequences, and how many tokens of each. Registered by
// name (--batching): "continuous" (vLLM: running sequences first, then new ones, under max_seqs
// and max_batched_tokens, prompts cut into chunks) and "static" (transformers-neuronx: a fixed
// batch padded to the compiled batch size and a sequence-length bucket, run to its end).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "trnsim/workloads/i_step_cost.h"

namespace trnsim::workloads {

class Replica;

class IBatchScheduler {
 public:
  virtual ~IBatchScheduler() = default;
  // Fills the replica's scheduled list (with chunks) and `batch` (what the step cost times);
  // returns false if there is nothing to run.
  virtual bool plan(Replica& r, double now, StepBatch& batch) = 0;
  // After the iteration's tokens were applied: a static batch releases its slots at its end.
  virtual void after(Replica& r, double now) {}
};

std::unique_ptr<IBatchScheduler> make_batch_scheduler(const std::string& name);
const std::vector<std::string>& batch_scheduler_names();

}  // namespace trnsim::workloads
