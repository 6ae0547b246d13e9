#include "trnsim/workloads/pipeline_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "trnsim/common/error.h"

namespace trnsim::workloads {
namespace {

std::vector<PipelinePass> gpipe(int64_t m) {
  std::vector<PipelinePass> o;
  for (int64_t i = 0; i < m; ++i) o.push_back({true, i, 0});
  for (int64_t i = 0; i < m; ++i) o.push_back({false, i, 0});
  return o;
}

// Megatron's 1F1B: p-r-1 warm-up forwards, then one forward and one backward alternately.
std::vector<PipelinePass> one_f_one_b(int p, int r, int64_t m) {
  const int64_t warm = std::min<int64_t>(p - r - 1, m);
  std::vector<PipelinePass> o;
  int64_t f = 0, b = 0;
  for (; f < warm; ++f) o.push_back({true, f, 0});
  for (; f < m; ++f, ++b) {
    o.push_back({true, f, 0});
    o.push_back({false, b, 0});
  }
  for (; b < m; ++b) o.push_back({false, b, 0});
  return o;
}

// Megatron's interleaved 1F1B: the k-th forward is chunk (k/p)%v of micro-batch
// (k/(pv))p + k%p; backwards walk the chunks in reverse. Warm-up 2(p-r-1) + (v-1)p.
std::vector<PipelinePass> interleaved(int p, int r, int64_t m, int v) {
  const int64_t total = m * v;
  auto at = [&](int64_t k, bool fwd) {
    int chunk = int((k / p) % v);
    if (!fwd) chunk = v - 1 - chunk;
    return PipelinePass{fwd, (k / (int64_t(p) * v)) * p + k % p, chunk};
  };
  const int64_t warm = std::min<int64_t>(int64_t(p - r - 1) * 2 + int64_t(v - 1) * p, total);
  std::vector<PipelinePass> o;
  int64_t f = 0, b = 0;
  for (; f < warm; ++f) o.push_back(at(f, true));
  for (; f < total; ++f, ++b) {
    o.push_back(at(f, true));
    o.push_back(at(b, false));
  }
  for (; b < total; ++b) o.push_back(at(b, false));
  return o;
}

}  // namespace

std::vector<std::vector<PipelinePass>> pipeline_order(PipelineSchedule s, int p, int64_t m, int v) {
  if (s != PipelineSchedule::Interleaved) v = 1;
  if (s == PipelineSchedule::Interleaved && m % p != 0)
    throw ConfigError(fmt::format("train: interleaved 1F1B needs micro-batches ({}) divisible by pp ({})", m, p));
  std::vector<std::vector<PipelinePass>> out(p);
  for (int r = 0; r < p; ++r)
    out[r] = s == PipelineSchedule::GPipe ? gpipe(m) : v == 1 ? one_f_one_b(p, r, m) : interleaved(p, r, m, v);
  return out;
}

PipelineTiming time_pipeline(PipelineSchedule s, int64_t m, int v, const std::vector<double>& fwd,
                             const std::vector<double>& bwd, double p2p) {
  const int p = int(fwd.size());
  if (s != PipelineSchedule::Interleaved) v = 1;
  const auto order = pipeline_order(s, p, m, v);
  // Virtual stage of (rank r, chunk c) is c*p + r; a forward needs the previous virtual stage's
  // forward, a backward the next one's backward (the last virtual stage: its own forward).
  std::map<std::tuple<bool, int64_t, int>, double> done;  // (fwd, mb, virtual stage) -> end
  std::vector<size_t> next(p, 0);
  std::vector<double> free_at(p, 0.0), busy(p, 0.0);
  std::vector<int64_t> held(p, 0), peak(p, 0);
  const int last = p * v - 1;
  size_t remaining = 0;
  for (auto& o : order) remaining += o.size();
  while (remaining > 0) {
    bool progressed = false;
    for (int r = 0; r < p; ++r) {
      while (next[r] < order[r].size()) {
        const PipelinePass& x = order[r][next[r]];
        const int vs = x.chunk * p + r;
        double ready = 0;
        if (x.forward && vs > 0) {
          auto it = done.find({true, x.micro_batch, vs - 1});
          if (it == done.end()) break;
          ready = it->second + p2p;
        } else if (!x.forward) {
          const bool own = vs == last;
          auto it = done.find({own, x.micro_batch, own ? vs : vs + 1});
          if (it == done.end()) break;
          ready = it->second + (own ? 0.0 : p2p);
        }
        const double t = x.forward ? fwd[r] : bwd[r];
        const double end = std::max(ready, free_at[r]) + t;
        done[{x.forward, x.micro_batch, vs}] = end;
        free_at[r] = end;
        busy[r] += t;
        held[r] += x.forward ? 1 : -1;
        peak[r] = std::max(peak[r], held[r]);
        ++next[r];
        --remaining;
        progressed = true;
      }
    }
    if (!progressed) throw Error("pipeline schedule deadlocked (internal error)");
  }
  PipelineTiming out;
  out.makespan_ns = *std::max_element(free_at.begin(), free_at.end());
  out.busy_ns = *std::max_element(busy.begin(), busy.end());
  out.bubble_fraction = out.makespan_ns > 0 ? (out.makespan_ns - out.busy_ns) / out.makespan_ns : 0;
  out.peak_in_flight = peak;
  return out;
}

double bubble_fraction_closed_form(PipelineSchedule s, int p, int64_t m, int v) {
  if (s != PipelineSchedule::Interleaved) v = 1;
  return double(p - 1) / (double(v) * m + p - 1);
}

}  // namespace trnsim::workloads
