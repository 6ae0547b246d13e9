// The per-second (per-bin) time series of a serving run: counts that happen in a bin
// (arrivals, completions, tokens, preemptions) and the state sampled at each bin's end
// (requests running and waiting, KV-cache utilisation, replicas up).
#pragma once
#include <cstdint>
#include <vector>

namespace trnsim::workloads {

struct TimelineBin {
  int64_t arrivals = 0, completions = 0, output_tokens = 0, prompt_tokens = 0, preemptions = 0, retries = 0;
  int64_t running = 0, waiting = 0, replicas_up = 0;
  double kv_utilization = 0;  // mean over the replicas that are up
};

class Timeline {
 public:
  explicit Timeline(double bin_s = 1.0) : bin_s_(bin_s) {}
  TimelineBin& at(double t) {
    const size_t i = t <= 0 ? 0 : static_cast<size_t>(t / bin_s_);
    if (i >= bins_.size()) bins_.resize(i + 1);
    return bins_[i];
  }
  double bin_s() const { return bin_s_; }
  std::vector<TimelineBin>& bins() { return bins_; }
  const std::vector<TimelineBin>& bins() const { return bins_; }

 private:
  double bin_s_;
  std::vector<TimelineBin> bins_;
};

}  // namespace trnsim::workloads
