// The per-second (per-bin) time series of a serving run: counts that happen in a bin
// (arrivals, completions, tokens, preemptions) and the state sampled at each bin's end
// (requests running and waiting, KV-cache utilisation, replicas up).
#pragma once
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "trnsim/common/error.h"

namespace trnsim::workloads {

struct TimelineBin {
  int64_t arrivals = 0, completions = 0, output_tokens = 0, prompt_tokens = 0, preemptions = 0, retries = 0;
  int64_t running = 0, waiting = 0, replicas_up = 0;
  double kv_utilization = 0;  // mean over the replicas that are up
  double energy_j = 0;        // dynamic energy of the iterations' work in the bin (chips' static power apart)
  double held_s = 0;          // replica-seconds held in the bin (up, cold, draining): x idle power = static energy
};

// The most bins a run keeps (about 100 B each: 200 MB; 24 days at the default 1 s). A tiny
// --timeline-bin-s (1e-300) made t / bin_s past size_t (undefined) and grew to 12 GB.
inline constexpr size_t kMaxTimelineBins = size_t{1} << 21;

class Timeline {
 public:
  explicit Timeline(double bin_s = 1.0) : bin_s_(bin_s) {}
  TimelineBin& at(double t) {
    const size_t i = index(t);
    if (i >= bins_.size()) bins_.resize(i + 1);
    return bins_[i];
  }
  double bin_s() const { return bin_s_; }
  // Adds `j` spread evenly over [t0, t1] to the bins it overlaps.
  void spread_energy(double t0, double t1, double j) { spread(t0, t1, j, &TimelineBin::energy_j); }
  // Adds the replica-seconds of one replica held over [t0, t1] to the bins it overlaps.
  void spread_held(double t0, double t1) { spread(t0, t1, t1 - t0, &TimelineBin::held_s); }
  std::vector<TimelineBin>& bins() { return bins_; }
  const std::vector<TimelineBin>& bins() const { return bins_; }

 private:
  size_t index(double t) const {
    if (!(t > 0)) return 0;
    const double i = t / bin_s_;
    if (!(i < static_cast<double>(kMaxTimelineBins)))
      throw ConfigError(fmt::format("--timeline-bin-s {}: the run reaches {} s, more than {} bins; give a larger bin",
                                    bin_s_, t, kMaxTimelineBins));
    return static_cast<size_t>(i);
  }

  void spread(double t0, double t1, double j, double TimelineBin::*field) {
    const size_t i0 = index(t0), i1 = index(t1);
    if (i1 >= bins_.size()) bins_.resize(i1 + 1);
    if (i1 == i0 || !(t1 > t0)) {
      bins_[i0].*field += j;
      return;
    }
    for (size_t i = i0; i <= i1; ++i) {
      const double lo = std::max(t0, static_cast<double>(i) * bin_s_), hi = std::min(t1, static_cast<double>(i + 1) * bin_s_);
      if (hi > lo) bins_[i].*field += j * (hi - lo) / (t1 - t0);
    }
  }

  double bin_s_;
  std::vector<TimelineBin> bins_;
};

}  // namespace trnsim::workloads
