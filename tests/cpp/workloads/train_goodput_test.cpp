// Goodput under failures: Daly's expected wall time against a Monte-Carlo run of the same
// process; the Young/Daly interval as the minimum; an injected-failure timeline's arithmetic.
#include <gtest/gtest.h>

#include "trnsim/common/error.h"

#include <cmath>

#include "trnsim/workloads/train_goodput.h"

namespace trnsim::workloads {
namespace {

TEST(Goodput, SimulatedFailuresMatchDalysExpectation) {
  const double work = 30 * 86400.0, ck = 120, restart = 600, mtbf = 3 * 3600.0;
  const double tau = daly_interval_s(ck, mtbf);
  EXPECT_NEAR(tau, std::sqrt(2 * ck * mtbf), 0.1 * tau);  // Young's first order
  const double expected = expected_wall_s(work, tau, ck, restart, mtbf);
  const double simulated = simulated_wall_s(work, tau, ck, restart, mtbf, 20, 7);
  EXPECT_NEAR(simulated / expected, 1.0, 0.02);
  // Goodput well below 1 at this failure rate, and the same seed gives the same bits.
  EXPECT_LT(work / expected, 0.9);
  EXPECT_EQ(simulated, simulated_wall_s(work, tau, ck, restart, mtbf, 20, 7));
}

TEST(Goodput, DalyIntervalIsTheMinimum) {
  const double work = 1e6, ck = 60, restart = 300, mtbf = 7200;
  const double tau = daly_interval_s(ck, mtbf);
  const double best = expected_wall_s(work, tau, ck, restart, mtbf);
  for (double k : {0.5, 0.8, 1.25, 2.0}) EXPECT_GT(expected_wall_s(work, tau * k, ck, restart, mtbf), best);
}

TEST(Goodput, JobMtbfSumsRates) {
  FailureRates f;
  f.chip_mtbf_h = 1000, f.node_mtbf_h = 500, f.link_mtbf_h = 1e12;
  // 16 chips on 1 node: 16/1000 + 1/500 per hour = 0.018 per hour.
  EXPECT_NEAR(job_mtbf_s(f, 16, 1) / (3600 / 0.018), 1.0, 1e-9);
}

TEST(Goodput, InjectedFailuresRollBackToTheLastCheckpoint) {
  // 100 steps of 10 s, a checkpoint every 20 steps (5 s), restart 60 s, failures in steps 30, 75.
  const auto ev = failure_timeline(100, 10, 20, 5, 60, {75, 30});
  // Lost: 10.5 steps (failure half-way through step 30, last checkpoint at 20) and 15.5 steps
  // (step 75, checkpoint at 60); checkpoints are written at 20, 40, 60, 80 (none at the end).
  double lost = 10.5 * 10 + 15.5 * 10, restarts = 2 * 60;
  int checkpoints = 0;
  for (const auto& e : ev) checkpoints += e.event == "checkpoint";
  EXPECT_EQ(checkpoints, 4);
  EXPECT_NEAR(ev.back().time_s, 100 * 10 + lost + restarts + checkpoints * 5, 1e-9);
  EXPECT_EQ(ev.back().event, "done");
  EXPECT_THROW(failure_timeline(100, 10, 20, 5, 60, {100}), ConfigError);
}

}  // namespace
}  // namespace trnsim::workloads
