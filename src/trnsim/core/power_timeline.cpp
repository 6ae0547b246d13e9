#include "trnsim/core/power_timeline.h"

#include <algorithm>

namespace trnsim::core {

void PowerTimeline::fit(int64_t end_ps) {
  while (end_ps > bin_ps_ * static_cast<int64_t>(kMaxBins)) {
    for (size_t i = 0; i < bins_.size(); i += 2) bins_[i / 2] = bins_[i] + (i + 1 < bins_.size() ? bins_[i + 1] : 0.0);
    bins_.resize((bins_.size() + 1) / 2);
    bin_ps_ *= 2;
  }
  const size_t need = static_cast<size_t>((end_ps + bin_ps_ - 1) / bin_ps_);
  if (bins_.size() < std::max<size_t>(need, 1)) bins_.resize(std::max<size_t>(need, 1), 0.0);
}

void PowerTimeline::add(int64_t start_ps, int64_t end_ps, double joules) {
  if (joules == 0) return;
  fit(std::max(end_ps, start_ps + 1));
  if (end_ps <= start_ps) {
    bins_[static_cast<size_t>(start_ps / bin_ps_)] += joules;
    return;
  }
  const double per_ps = joules / static_cast<double>(end_ps - start_ps);
  for (int64_t b = start_ps / bin_ps_; b * bin_ps_ < end_ps; ++b) {
    const int64_t lo = std::max(start_ps, b * bin_ps_), hi = std::min(end_ps, (b + 1) * bin_ps_);
    bins_[static_cast<size_t>(b)] += per_ps * static_cast<double>(hi - lo);
  }
}

double PowerTimeline::peak_w(int64_t total_ps) const {
  double peak = 0;
  for (size_t i = 0; i < bins_.size(); ++i) {
    const int64_t start = static_cast<int64_t>(i) * bin_ps_;
    const int64_t width = std::min(bin_ps_, total_ps - start);
    if (width <= 0) break;
    peak = std::max(peak, bins_[i] / (static_cast<double>(width) * 1e-12));
  }
  return peak;
}

}  // namespace trnsim::core
