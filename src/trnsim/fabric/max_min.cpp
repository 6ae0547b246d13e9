#include "trnsim/fabric/max_min.h"

#include <algorithm>
#include <limits>
#include <queue>

namespace trnsim::fabric {

void MaxMinSolver::solve(std::span<const double> capacity, std::span<const int64_t> offset,
                         std::span<const int> path, std::vector<double>& rate) {
  const size_t nres = capacity.size();
  const size_t nflows = offset.empty() ? 0 : offset.size() - 1;
  rate.assign(nflows, std::numeric_limits<double>::infinity());
  left_.assign(capacity.begin(), capacity.end());
  unfrozen_.assign(nres, 0);
  version_.assign(nres, 0);
  frozen_.assign(nflows, 0);

  // Resource -> flows crossing it (counting sort of the paths).
  for (int r : path) ++unfrozen_[r];
  res_offset_.assign(nres + 1, 0);
  for (size_t r = 0; r < nres; ++r) res_offset_[r + 1] = res_offset_[r] + unfrozen_[r];
  res_flows_.resize(path.size());
  {
    std::vector<int64_t> fill(res_offset_.begin(), res_offset_.end() - 1);
    for (size_t f = 0; f < nflows; ++f)
      for (int64_t i = offset[f]; i < offset[f + 1]; ++i) res_flows_[fill[path[i]]++] = static_cast<int>(f);
  }

  // Min-heap of (fair share, resource, version); an entry is stale once its resource changed.
  struct Entry {
    double share;
    int res;
    uint32_t version;
    bool operator>(const Entry& o) const { return share != o.share ? share > o.share : res > o.res; }
  };
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  for (size_t r = 0; r < nres; ++r)
    if (unfrozen_[r] > 0) heap.push({left_[r] / unfrozen_[r], static_cast<int>(r), 0});

  while (!heap.empty()) {
    const Entry e = heap.top();
    heap.pop();
    if (e.version != version_[e.res] || unfrozen_[e.res] == 0) continue;
    const double share = e.share;
    for (int64_t i = res_offset_[e.res]; i < res_offset_[e.res + 1]; ++i) {
      const int f = res_flows_[i];
      if (frozen_[f]) continue;
      frozen_[f] = 1;
      rate[f] = share;
      for (int64_t j = offset[f]; j < offset[f + 1]; ++j) {
        const int r = path[j];
        left_[r] = std::max(0.0, left_[r] - share);
        --unfrozen_[r];
        ++version_[r];
        if (r != e.res && unfrozen_[r] > 0) heap.push({left_[r] / unfrozen_[r], r, version_[r]});
      }
    }
  }
}

}  // namespace trnsim::fabric
