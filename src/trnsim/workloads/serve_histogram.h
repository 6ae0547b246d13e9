// A log-bucketed histogram for quantities too many to keep one by one (inter-token latencies:
// one per generated token, 10^8 and more in a long run). Buckets grow by 0.1 %, so a quantile
// read from it is within 0.1 % of the exact order statistic; mean and max are exact.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

namespace trnsim::workloads {

class LogHistogram {
 public:
  static constexpr double kMin = 1e-7, kGrowth = 1.001;

  void add(double x) {
    ++count_, sum_ += x;
    if (x > max_) max_ = x;
    const size_t i = x <= kMin ? 0 : static_cast<size_t>(std::log(x / kMin) * inv_log_growth_) + 1;
    if (i >= bins_.size()) bins_.resize(i + 1, 0);
    ++bins_[i];
  }
  int64_t count() const { return count_; }
  double mean() const { return count_ ? sum_ / count_ : 0; }
  double max() const { return max_; }
  // q in [0, 100]: the upper edge of the bucket holding the order statistic (capped at max).
  double percentile(double q) const {
    if (!count_) return 0;
    const double rank = std::ceil(q / 100.0 * static_cast<double>(count_));
    int64_t seen = 0;
    for (size_t i = 0; i < bins_.size(); ++i) {
      seen += bins_[i];
      if (static_cast<double>(seen) >= rank && bins_[i]) {
        const double edge = i == 0 ? kMin : kMin * std::exp(static_cast<double>(i) / inv_log_growth_);
        return edge < max_ ? edge : max_;
      }
    }
    return max_;
  }

 private:
  double inv_log_growth_ = 1.0 / std::log(kGrowth);
  std::vector<int64_t> bins_;
  int64_t count_ = 0;
  double sum_ = 0, max_ = 0;
};

}  // namespace trnsim::workloads
