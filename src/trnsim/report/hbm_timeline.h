// HBM bandwidth over time, for a counter track in the trace: each DMA with an HBM end spreads
// its HBM bytes evenly over its [start, end] and the run is cut into equal bins.
#pragma once
#include <cstdint>
#include <vector>

#include "trnsim/core/run.h"
#include "trnsim/isa/program.h"

namespace trnsim::report {

struct BandwidthSample {
  int64_t start_ps = 0;
  double gbps = 0;  // average over [start_ps, next sample's start_ps)
};

// `bins` equal bins over [0, total]; empty when the run has no time or no records.
std::vector<BandwidthSample> hbm_bandwidth_timeline(const isa::Program& program,
                                                    const core::RunResult& result, int bins);

}  // namespace trnsim::report
