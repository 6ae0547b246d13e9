// Pipeline-parallel schedules (GPipe, 1F1B, interleaved 1F1B) as per-stage orders of forward
// and backward micro-batch passes, executed by dependency: a pass starts when its stage is free
// and its input (the previous stage's forward, the next stage's backward) has arrived. The
// makespan gives the bubble; tests hold it to the closed forms (p-1)/(m+p-1) and
// (p-1)/(vm+p-1). The count of micro-batches a stage holds at once sizes its activations.
#pragma once
#include <cstdint>
#include <vector>

#include "trnsim/workloads/train_config.h"

namespace trnsim::workloads {

struct PipelinePass {
  bool forward = true;
  int64_t micro_batch = 0;
  int chunk = 0;  // model chunk on this rank (interleaved: 0..v-1; else 0)
};

// Per pipeline rank, its passes in execution order. Interleaved needs m % p == 0.
std::vector<std::vector<PipelinePass>> pipeline_order(PipelineSchedule s, int stages, int64_t micro_batches,
                                                      int virtual_stages);

struct PipelineTiming {
  double makespan_ns = 0;
  double busy_ns = 0;                 // of the busiest rank: its passes only
  double bubble_fraction = 0;         // (makespan - busy) / makespan on that rank
  std::vector<int64_t> peak_in_flight;  // per rank: most micro-batch chunks held (forward done, backward not)
};

// forward_ns[r] / backward_ns[r]: one pass of one chunk on rank r; p2p_ns: the send between
// consecutive ranks (added to every dependency that crosses ranks).
PipelineTiming time_pipeline(PipelineSchedule s, int64_t micro_batches, int virtual_stages,
                             const std::vector<double>& forward_ns, const std::vector<double>& backward_ns,
                             double p2p_ns);

// Closed forms (equal per-rank pass times, no p2p): bubble / makespan.
double bubble_fraction_closed_form(PipelineSchedule s, int stages, int64_t micro_batches, int virtual_stages);

}  // namespace trnsim::workloads
