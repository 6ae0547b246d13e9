// Torus vs switched fabric on all-to-all at equal per-chip link bandwidth (the Trn3 design
// claim): 64 chips, 1,200 GB/s per chip, direct all-to-all (each rank sends S/64 to each peer).
//   switch: every flow crosses its sender's uplink and its receiver's downlink, 63 flows each:
//           network time = 63 (S/64) / 1200 + 2 L (up, down);
//   4x4x4 torus: 6 links per chip of 200 GB/s; dimension-order routes with balanced ties put
//           exactly 32 flows on every directed link (sum of ring distances 0+1+2+1 = 4 per
//           dimension, 64 x 16 x 4 traversals over 128 links), so every flow runs at 200/32 and
//           the farthest (6 hops) is delivered last: network time = (S/64) / (200/32) + 6 L.
// Fixed costs are identical (one step, 63 transfers per rank), so the difference is the network
// (timed without the cross-chip step floor, which both steps would otherwise sit under).
#include <gtest/gtest.h>

#include "test_system.h"
#include "trnsim/collectives/collective.h"
#include "trnsim/collectives/i_collective_algorithm.h"
#include "trnsim/collectives/schedule_timer.h"

using namespace trnsim;
using namespace trnsim::collectives;

namespace {
// The fabric alone: the cross-chip step floor (12 us) would hide a gap of a few microseconds.
double a2a_ns(const hw::SystemSpec& sys, int64_t S) {
  auto costs = collective_costs(sys, numerics::DType::F32, 1);
  costs.cross_chip_step = Nanoseconds(0);
  fabric::Fabric fab(sys, {.chip_dma_bandwidth = costs.chip_dma_bandwidth});
  const CollectiveJob job{Op::AllToAll, S / 4, &fab};
  ScheduleTimer timer(fab, costs, 4);
  return timer.time(*algorithm("direct").schedule(job)).total.value();
}
double torus_net(double S, double L) { return S / 64 / (200.0 / 32) + 6 * L; }
double switch_net(double S, double L) { return 63 * (S / 64) / 1200 + 2 * L; }
}  // namespace

TEST(TorusVsSwitch, SwitchWinsOnLatencyBecauseOfFewerHops) {
  const double L = 1000;
  auto torus = test::make_system("torus3d", {4, 4, 4}, 1200, 64, L);
  auto sw = test::make_system("switch", {}, 1200, 64, L);
  const int64_t S = 64 * 1024;  // 1 KiB to each peer: latency-bound
  const double gap = a2a_ns(torus, S) - a2a_ns(sw, S);
  EXPECT_NEAR(gap, torus_net(S, L) - switch_net(S, L), 1.0);
  EXPECT_GT(gap, 0.95 * 4 * L);  // almost all of it is the 4 extra hops' latency

  // Without link latency the small-message gap all but vanishes: hops were the reason.
  auto torus0 = test::make_system("torus3d", {4, 4, 4}, 1200, 64, 0);
  auto sw0 = test::make_system("switch", {}, 1200, 64, 0);
  const double gap0 = a2a_ns(torus0, S) - a2a_ns(sw0, S);
  EXPECT_NEAR(gap0, torus_net(S, 0) - switch_net(S, 0), 1.0);
  EXPECT_LT(gap0, 0.05 * gap);
}

TEST(TorusVsSwitch, LargeMessagesLoadEveryTorusLinkWithMultiHopFlows) {
  const double L = 1000;
  auto torus = test::make_system("torus3d", {4, 4, 4}, 1200, 64, L);
  auto sw = test::make_system("switch", {}, 1200, 64, L);
  const int64_t S = int64_t(256) << 20;
  const double gap = a2a_ns(torus, S) - a2a_ns(sw, S);
  EXPECT_NEAR(gap / (torus_net(S, L) - switch_net(S, L)), 1.0, 1e-6);
  // Bandwidth ratio: (32/200) / (63/1200) = 3.05x longer data phase on the torus.
  EXPECT_NEAR((torus_net(S, 0)) / switch_net(S, 0), 3.05, 0.01);
}
