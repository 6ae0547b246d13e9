// run --in-flight: the closed form (runtime/in_flight_load.h) against a discrete-event
// simulation written here: N requests dealt round-robin to C copies, each copy a FIFO server
// taking exactly T per request, every finished request resubmitted at once to the same copy.
// Latencies of the completions in [warm-up, end) give the empirical p50/p99 (nearest rank),
// mean and throughput; the closed form must match them to 1e-9 relative.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <vector>

#include "trnsim/common/error.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/in_flight_load.h"

namespace trnsim::runtime {
namespace {

struct Measured {
  double p50 = 0, p99 = 0, mean = 0, per_s = 0;
};

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
  std::sort(lat.begin(), lat.end());
  auto rank = [&](double q) { return lat[static_cast<size_t>(std::ceil(q * static_cast<double>(lat.size()))) - 1]; };
  Measured m;
  m.p50 = rank(0.50);
  m.p99 = rank(0.99);
  for (double x : lat) m.mean += x / static_cast<double>(lat.size());
  m.per_s = static_cast<double>(done) * static_cast<double>(batch) / (end - warm);
  return m;
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
