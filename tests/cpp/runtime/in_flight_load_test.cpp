// run --in-flight: the closed form (runtime/in_flight_load.h) against a discrete-event
// simulation written here: N requests dealt round-robin to C copies, each copy a FIFO server
// taking exactly T per request, every finished request resubmitted at once to the same copy.
// Latencies of the completions in [warm-up, end) give the empirical p50/p99 (nearest rank),
// mean and throughput; the closed form must match them to 1e-9 relative.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>
#include <tuple>
#include <vector>

#include "trnsim/common/error.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/in_flight_load.h"

namespace trnsim::runtime {
namespace {

struct Measured {
  double p50 = 0, p99 = 0, mean = 0, per_s = 0;
};

// Nearest-rank p50/p99 and the mean of the latencies, with the measured throughput.
Measured measured(std::vector<double> lat, double per_s) {
  std::sort(lat.begin(), lat.end());
  auto rank = [&](double q) { return lat[static_cast<size_t>(std::ceil(q * static_cast<double>(lat.size()))) - 1]; };
  Measured m;
  m.p50 = rank(0.50);
  m.p99 = rank(0.99);
  for (double x : lat) m.mean += x / static_cast<double>(lat.size());
  m.per_s = per_s;
  return m;
}

Measured simulate(int n, int c, double t, int64_t batch) {
  std::vector<std::deque<double>> queue(static_cast<size_t>(c));  // submit times per copy
  for (int i = 0; i < n; ++i) queue[static_cast<size_t>(i % c)].push_back(0.0);
  std::vector<double> free_at(static_cast<size_t>(c), 0.0), lat;
  const int rounds = 1000;  // completions per busy copy
  const double warm = 10 * n * t, end = rounds * t;
  int done = 0;
  for (int r = 0; r < rounds; ++r)
    for (int k = 0; k < c; ++k) {
      auto& q = queue[static_cast<size_t>(k)];
      if (q.empty()) continue;
      const double submit = q.front(), finish = std::max(free_at[static_cast<size_t>(k)], submit) + t;
      q.pop_front();
      free_at[static_cast<size_t>(k)] = finish;
      q.push_back(finish);  // the closed loop: a new request at once
      if (finish > warm && finish <= end) { lat.push_back(finish - submit); ++done; }
    }
  return measured(lat, static_cast<double>(done) * static_cast<double>(batch) / (end - warm));
}

TEST(InFlightLoad, ClosedFormMatchesAnEventSimulation) {
  const double t = 1.764e-3;
  for (int c : {1, 2, 4})
    for (int n : {1, 2, 3, 4, 5, 7, 8})
      for (int64_t batch : {1, 8}) {
        const InFlightLoad l = in_flight_load(t, batch, n, c);
        const Measured m = simulate(n, c, t, batch);
        SCOPED_TRACE(testing::Message() << "N=" << n << " C=" << c << " batch=" << batch);
        EXPECT_NEAR(l.p50_latency_s, m.p50, 1e-9 * m.p50);
        EXPECT_NEAR(l.p99_latency_s, m.p99, 1e-9 * m.p99);
        EXPECT_NEAR(l.mean_latency_s, m.mean, 1e-6 * m.mean);
        EXPECT_NEAR(l.inferences_per_s, m.per_s, 1e-2 * m.per_s);  // the measuring window's edges
        EXPECT_EQ(l.busy_copies, std::min(n, c));
      }
}

// The same closed loop with host transfers: each request's inputs cross the chip's one host link
// (FIFO, shared by the copies) before it can run, and its outputs after; the link serves the
// transfers in the order they became ready. Events in time order, ties by sequence number.
Measured simulate_host(int n, int c, double t, double h_in, double h_out) {
  enum Kind { kArrive, kLinkDone, kCoreDone };
  using Ev = std::tuple<double, long, Kind, int, bool>;  // time, seq, kind, request, inbound
  std::priority_queue<Ev, std::vector<Ev>, std::greater<>> ev;
  std::vector<double> submit(static_cast<size_t>(n));
  std::vector<std::deque<int>> core_q(static_cast<size_t>(c));
  std::vector<bool> core_busy(static_cast<size_t>(c), false);
  std::deque<std::pair<int, bool>> link_q;
  bool link_busy = false;
  long seq = 0;
  std::vector<double> lat;
  const double warm = 50 * n * (t + h_in + h_out), end = 2000 * (t + h_in + h_out);
  int done = 0;
  for (int i = 0; i < n; ++i) ev.emplace(0.0, seq++, kArrive, i, true);
  while (!ev.empty()) {
    auto [now, s, kind, r, inbound] = ev.top();
    ev.pop();
    if (now > end) break;
    const size_t k = static_cast<size_t>(r % c);
    if (kind == kArrive) { submit[static_cast<size_t>(r)] = now; link_q.emplace_back(r, true); }
    if (kind == kLinkDone) {
      link_busy = false;
      if (inbound) core_q[k].push_back(r);
      else {
        if (now > warm) { lat.push_back(now - submit[static_cast<size_t>(r)]); ++done; }
        ev.emplace(now, seq++, kArrive, r, true);  // the closed loop: a new request at once
      }
    }
    if (kind == kCoreDone) { core_busy[k] = false; link_q.emplace_back(r, false); }
    if (!link_busy && !link_q.empty()) {
      auto [lr, in] = link_q.front();
      link_q.pop_front();
      link_busy = true;
      ev.emplace(now + (in ? h_in : h_out), seq++, kLinkDone, lr, in);
    }
    for (size_t j = 0; j < core_q.size(); ++j)
      if (!core_busy[j] && !core_q[j].empty()) {
        core_busy[j] = true;
        ev.emplace(now + t, seq++, kCoreDone, core_q[j].front(), false);
        core_q[j].pop_front();
      }
  }
  return measured(lat, static_cast<double>(done) / (end - warm));
}

TEST(InFlightLoad, HostTransfersMatchAnEventSimulation) {
  // An image in (0.3 T) and logits out (0.02 T): they add to a request's latency only where its
  // copy holds one request; with more, another request's transfers hide under the execution.
  const double t = 1e-3, h_in = 0.3e-3, h_out = 0.02e-3;
  for (int c : {1, 2})
    for (int n : {1, 2, 3, 4, 5}) {
      const InFlightLoad l = in_flight_load(t, 1, n, c, h_in + h_out);
      const Measured m = simulate_host(n, c, t, h_in, h_out);
      SCOPED_TRACE(testing::Message() << "N=" << n << " C=" << c);
      if (n % c == 0) {  // equal queues: every completion waits the same, exactly
        EXPECT_NEAR(l.p50_latency_s, m.p50, 1e-9 * m.p50);
        EXPECT_NEAR(l.p99_latency_s, m.p99, 1e-9 * m.p99);
        EXPECT_NEAR(l.mean_latency_s, m.mean, 1e-6 * m.mean);
      } else {  // unequal queues contend for the link in turn: the bounds hold the mean to 1%
        EXPECT_NEAR(l.mean_latency_s, m.mean, 1e-2 * m.mean);
      }
      EXPECT_NEAR(l.inferences_per_s, m.per_s, 1e-2 * m.per_s);
    }
  // Transfers longer than the execution: the shared link binds (two copies, 1.6 T a cycle each).
  const InFlightLoad l = in_flight_load(t, 1, 4, 2, 0.8e-3);
  const Measured m = simulate_host(4, 2, t, 0.7e-3, 0.1e-3);
  EXPECT_NEAR(l.mean_latency_s, m.mean, 1e-3 * m.mean);
  EXPECT_NEAR(l.inferences_per_s, m.per_s, 1e-2 * m.per_s);
}

TEST(InFlightLoad, HostSecondsFromTheChipsLink) {
  // inf2: 31.5 GB/s and a 1.3 us DMA fixed cost per transfer; a 224x224 RGB image in fp32 and
  // 1000 logits: 602,112 + 4,000 bytes / 31.5 GB/s + 2 x 1.3 us = 21.84 us.
  const hw::ChipSpec inf2 = hw::load_chip("inf2");
  EXPECT_NEAR(host_io_seconds(inf2, 602112, 4000, 2), 606112 / 31.5e9 + 2.6e-6, 1e-12);
  hw::ChipSpec none = inf2;
  none.host_link.reset();
  EXPECT_EQ(host_io_seconds(none, 602112, 4000, 2), 0.0);
}

TEST(InFlightLoad, FourRequestsOnTwoCoresWaitForEachOther) {
  // The vision throughput rows: 4 in flight on inf2's 2 cores, each request waits 2T.
  const InFlightLoad l = in_flight_load(2e-3, 8, 4, 2);
  EXPECT_DOUBLE_EQ(l.p50_latency_s, 4e-3);
  EXPECT_DOUBLE_EQ(l.p99_latency_s, 4e-3);
  EXPECT_DOUBLE_EQ(l.inferences_per_s, 2 * 8 / 2e-3);
  EXPECT_EQ(l.max_queued, 2);
}

TEST(InFlightLoad, RefusesBadCounts) {
  EXPECT_THROW(in_flight_load(1e-3, 1, 0, 2), ConfigError);
  EXPECT_THROW(in_flight_load(1e-3, 1, -3, 2), ConfigError);
  EXPECT_THROW(in_flight_load(1e-3, 1, 2, 0), ConfigError);
  EXPECT_THROW(in_flight_load(0.0, 1, 2, 2), ConfigError);
  EXPECT_THROW(in_flight_load(1e-3, 0, 2, 2), ConfigError);
  EXPECT_THROW(in_flight_load(1e-3, 1, 2, 2, -1e-6), ConfigError);
}

TEST(InFlightLoad, CopySlotsAreLogicalCoresPerCopy) {
  const hw::ChipSpec inf2 = hw::load_chip("inf2"), trn2 = hw::load_chip("trn2");
  EXPECT_EQ(copy_slots(inf2, 1, 0), 2);
  EXPECT_EQ(copy_slots(inf2, 0, 0), 1);  // one copy on all cores
  EXPECT_EQ(copy_slots(trn2, 1, 0), trn2.neuron_cores / 2);  // LNC=2 by default
  EXPECT_EQ(copy_slots(trn2, 1, 1), trn2.neuron_cores);
  EXPECT_EQ(copy_slots(trn2, 3, 0), 1);
  EXPECT_THROW(copy_slots(inf2, 3, 0), ConfigError);
}

}  // namespace
}  // namespace trnsim::runtime
