#include "trnsim/collectives/functional_executor.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"

namespace trnsim::collectives {

void execute(const ISchedule& schedule, std::vector<std::vector<float>>& buffers) {
  std::vector<Transfer> step;
  std::vector<float> payload;
  const int n = static_cast<int>(buffers.size());
  for (int s = 0; s < schedule.steps(); ++s) {
    step.clear();
    schedule.append_step(s, step);
    // Read every payload first: a step sees the buffers as they were when it began.
    payload.clear();
    for (const Transfer& t : step) {
      if (t.src < 0 || t.src >= n || t.dst < 0 || t.dst >= n)
        throw Error(fmt::format("functional collective: transfer {} -> {} outside {} ranks", t.src, t.dst, n));
      const auto& src = buffers[t.src];
      if (t.src_offset < 0 || t.src_offset + t.count > static_cast<int64_t>(src.size()) || t.dst_offset < 0 ||
          t.dst_offset + t.count > static_cast<int64_t>(buffers[t.dst].size()))
        throw Error("functional collective: a transfer runs past a buffer");
      payload.insert(payload.end(), src.begin() + t.src_offset, src.begin() + t.src_offset + t.count);
    }
    size_t at = 0;
    for (const Transfer& t : step) {
      float* dst = buffers[t.dst].data() + t.dst_offset;
      const float* p = payload.data() + at;
      if (t.reduce)
        for (int64_t i = 0; i < t.count; ++i) dst[i] += p[i];
      else
        std::copy(p, p + t.count, dst);
      at += static_cast<size_t>(t.count);
    }
  }
}

}  // namespace trnsim::collectives
