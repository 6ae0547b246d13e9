// Functional mode: runs a schedule on real data, one fp32 buffer per rank, with the semantics
// of schedule.h (a step reads the buffers as they were when it began, then writes or adds).
// The same schedule objects as the timing mode; tests hold the results to numpy's.
#pragma once
#include <vector>

#include "trnsim/collectives/schedule.h"

namespace trnsim::collectives {

void execute(const ISchedule& schedule, std::vector<std::vector<float>>& buffers);

}  // namespace trnsim::collectives
