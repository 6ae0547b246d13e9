#include "trnsim/collectives/schedule_timer.h"

#include <algorithm>
#include <cmath>

namespace trnsim::collectives {

ScheduleTimer::StepCost ScheduleTimer::simulate(const std::vector<Transfer>& step) {
  const int n = net_.ranks();
  std::vector<int> sends(n, 0);
  std::vector<double> reduced(n, 0.0);  // bytes each rank adds
  bool cross_chip = false;
  fabric::LinkEnergy energy;
  net_.reset();
  for (size_t i = 0; i < step.size(); ++i) {
    const Transfer& t = step[i];
    const double bytes = static_cast<double>(t.count) * elem_bytes_;
    ++sends[t.src];
    cross_chip = cross_chip || net_.crosses_chips(t.src, t.dst);
    if (t.reduce) reduced[t.dst] += bytes;
    net_.send(t.src, t.dst, Bytes(bytes), sim::Time(), i);
    net_.tally_energy(t.src, t.dst, bytes, energy);
  }
  sim::Time end;
  while (net_.advance(delivered_)) end = net_.now();
  delivered_.clear();
  const double t_net = end.ns();

  const double reduce_bytes_per_ns = costs_.reduce_elems_per_ns * elem_bytes_;
  double tail = 0;
  for (double b : reduced) {
    if (b <= 0) continue;
    const double last_chunk = std::min(costs_.pipeline_chunk.value(), b) / reduce_bytes_per_ns;
    tail = std::max(tail, last_chunk + std::max(0.0, b / reduce_bytes_per_ns - t_net));
  }
  const int busiest = *std::max_element(sends.begin(), sends.end());
  const int rounds = (busiest + costs_.dma_rings_per_rank - 1) / costs_.dma_rings_per_rank;
  const Nanoseconds fixed = costs_.sync_handshake + costs_.cc_step + costs_.descriptor_setup * rounds;
  const Nanoseconds busy = fixed + Nanoseconds(t_net + tail);
  // A step between chips lasts at least its cross-chip handshake; the excess counts as fixed cost.
  if (cross_chip && costs_.cross_chip_step > busy)
    return {costs_.cross_chip_step - Nanoseconds(t_net + tail), costs_.cross_chip_step, energy};
  return {fixed, busy, energy};
}

ScheduleTiming ScheduleTimer::time(const ISchedule& schedule) {
  ScheduleTiming out;
  out.total = out.fixed = costs_.launch;
  std::vector<Transfer> step;
  std::vector<int64_t> key;
  std::vector<int64_t> sent(net_.ranks(), 0);
  for (int s = 0; s < schedule.steps(); ++s) {
    step.clear();
    schedule.append_step(s, step);
    if (step.empty()) continue;
    key.clear();
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the step's (src, dst, count, reduce)
    for (const Transfer& t : step) {
      for (int64_t v : {int64_t(t.src), int64_t(t.dst), t.count * 2 + (t.reduce ? 1 : 0)}) {
        key.push_back(v);
        h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
      }
      sent[t.src] += t.count * elem_bytes_;
    }
    auto& bucket = memo_[h];
    const StepCost* cost = nullptr;
    for (auto& [k, c] : bucket)
      if (k == key) cost = &c;
    if (!cost) {
      bucket.emplace_back(key, simulate(step));
      cost = &bucket.back().second;
      ++out.simulated_steps;
    }
    out.total += cost->total;
    out.fixed += cost->fixed;
    out.energy += cost->energy;
    ++out.steps;
    out.transfers += static_cast<int64_t>(step.size());
  }
  out.max_bytes_sent_per_rank = sent.empty() ? 0 : *std::max_element(sent.begin(), sent.end());
  return out;
}

}  // namespace trnsim::collectives
