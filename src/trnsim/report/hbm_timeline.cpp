#include "trnsim/report/hbm_timeline.h"

#include <algorithm>

#include "trnsim/report/op_facts.h"

namespace trnsim::report {

std::vector<BandwidthSample> hbm_bandwidth_timeline(const isa::Program& program,
                                                    const core::RunResult& result, int bins) {
  const int64_t total = result.total.ps();
  if (total <= 0 || bins <= 0 || result.records.empty()) return {};
  bins = static_cast<int>(std::min<int64_t>(bins, total));
  const double width = static_cast<double>(total) / bins;
  std::vector<double> bytes(bins, 0.0);
  for (const auto& r : result.records) {
    if (r.engine != isa::Engine::Dma) continue;
    double b = op_hbm_bytes(core::RunResult::instruction(program, r).op);
    if (b <= 0) continue;
    if (r.end_ps <= r.start_ps) {  // instantaneous: all bytes in one bin
      bytes[std::min(bins - 1, static_cast<int>(r.start_ps / width))] += b;
      continue;
    }
    const double rate = b / static_cast<double>(r.end_ps - r.start_ps);  // bytes per ps
    int first = std::min(bins - 1, static_cast<int>(r.start_ps / width));
    int last = std::min(bins - 1, static_cast<int>((r.end_ps - 1) / width));
    for (int i = first; i <= last; ++i) {
      double lo = std::max<double>(r.start_ps, i * width);
      double hi = std::min<double>(r.end_ps, (i + 1) * width);
      if (hi > lo) bytes[i] += rate * (hi - lo);
    }
  }
  std::vector<BandwidthSample> out(bins);
  for (int i = 0; i < bins; ++i) {
    out[i].start_ps = static_cast<int64_t>(i * width);
    out[i].gbps = bytes[i] / (width * 1e-3);  // bytes per ns == GB/s
  }
  return out;
}

}  // namespace trnsim::report
