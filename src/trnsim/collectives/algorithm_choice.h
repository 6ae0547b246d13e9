// Automatic choice of the algorithm: every registered algorithm that can run the job (and whose
// schedule is small enough to time quickly) is timed on the job's own fabric, and the fastest
// wins (ties: registration order). So the choice follows message size (fixed per-step costs vs
// bandwidth) and topology (contention of distant partners on a torus, the EFA boundary)
// without thresholds to tune. A named algorithm overrides it.
#pragma once
#include <string>

#include "trnsim/collectives/i_collective_algorithm.h"
#include "trnsim/collectives/schedule_timer.h"

namespace trnsim::collectives {

// Flat schedules over this many transfers are not timed for the automatic choice (a 16,384-rank
// ring all-reduce has 5 x 10^8); naming the algorithm still times it.
inline constexpr int64_t kAutoTransferBudget = 40'000'000;

// One step is held in memory while it is timed; beyond this many transfers in a step (a direct
// all-to-all on 8,192+ ranks) the job is refused with a pointer to the hierarchical algorithms.
inline constexpr int64_t kMaxTransfersPerStep = int64_t(1) << 25;

// A named algorithm is timed whatever its size, up to this many transfers in all (a ring on
// 10^7 ranks has 2 x 10^14 and would run for days): beyond, refused up front with the count.
inline constexpr int64_t kMaxTransfers = 2'000'000'000;

struct TimedChoice {
  const ICollectiveAlgorithm* algorithm = nullptr;
  ScheduleTiming timing;
};

// `name` empty or "auto": choose; otherwise that algorithm (UnsupportedError with its reason if
// it cannot run the job). `mesh_max_bytes` > 0 leaves "direct" (the mesh) out of the automatic
// choice for a rank buffer larger than that (Neuron's size classes, see CollectiveRunner::time).
TimedChoice choose_and_time(const CollectiveJob& job, ScheduleTimer& timer, const std::string& name,
                            int64_t buffer_bytes = 0, int64_t mesh_max_bytes = 0);

}  // namespace trnsim::collectives
