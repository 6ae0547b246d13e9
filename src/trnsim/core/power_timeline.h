// Dynamic energy over simulated time in fixed-width bins, for peak power and the trace's power
// counter track. An instruction's energy is spread evenly over its duration. The bins start at
// 100 ns and double in width (merging pairs) whenever a run outgrows kMaxBins, so memory stays
// bounded for runs of any length.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace trnsim::core {

class PowerTimeline {
 public:
  static constexpr int64_t kFirstBinPs = 100'000;
  static constexpr size_t kMaxBins = 4096;

  void add(int64_t start_ps, int64_t end_ps, double joules);
  int64_t bin_ps() const { return bin_ps_; }
  const std::vector<double>& bins_j() const { return bins_; }
  // Highest dynamic power of any bin, in watts, for a run that ends at total_ps (the last bin
  // counts only its covered part).
  double peak_w(int64_t total_ps) const;

 private:
  void fit(int64_t end_ps);

  int64_t bin_ps_ = kFirstBinPs;
  std::vector<double> bins_;
};

}  // namespace trnsim::core
