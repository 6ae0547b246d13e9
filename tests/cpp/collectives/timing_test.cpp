// Timing mode against closed forms: a ring all-reduce on a ring fabric, step by step.
#include <gtest/gtest.h>

#include <algorithm>

#include "test_system.h"
#include "trnsim/collectives/collective.h"
#include "trnsim/collectives/i_collective_algorithm.h"

using namespace trnsim;
using namespace trnsim::collectives;

TEST(Timing, RingAllReduceOnARingMatchesTheStepFormula) {
  // 8 chips in a ring, 400 GB/s per chip = 200 GB/s per link direction; the DMA path
  // (16 x 1000 x 1.115 GB/s) never binds. Each step every rank sends S/8 one hop:
  // (S/8)/200 + latency on the network, plus the fixed costs; reduce-scatter steps add the
  // receiver's last chunk: min(512 KiB, S/8) / (64 fp32 adds per ns x 4 B).
  const int n = 8;
  auto sys = test::make_system("ring", {n}, 400, n, 700);
  CollectiveOptions o;
  o.algorithm = "ring";
  CollectiveRunner runner(sys, o);
  const auto& c = runner.costs();
  // Every step crosses chips: it lasts at least the cross-chip step (the floor binds on the
  // small sizes, not at 1 GiB).
  const double floor = c.cross_chip_step.value();
  EXPECT_DOUBLE_EQ(floor, 12'000);
  for (int64_t S : {int64_t(8192), int64_t(1) << 20, int64_t(1) << 30}) {
    const double piece = static_cast<double>(S) / n;
    const double step = c.sync_handshake.value() + c.cc_step.value() + c.descriptor_setup.value() + piece / 200 + 700;
    const double tail = std::min(512.0 * 1024, piece) / (64.0 * 4);
    const double want = c.launch.value() + (n - 1) * (std::max(floor, step + tail) + std::max(floor, step));
    EXPECT_NEAR(runner.time(S).time_s * 1e9, want, 1e-3 * 2 * (n - 1)) << S;  // ps rounding per step
  }
}

TEST(Timing, CrossChipStepFloorBindsOnSmallStepsBetweenChipsOnly) {
  // Ring all-reduce of 8 KiB fp32: steps of 1 KiB take ~3 us of set-up and network, below the
  // 12 us floor. 8 chips with one rank each: 14 steps x 12 us. The same 8 ranks on one chip
  // (no link crossed): the floor does not apply, each step is its own fixed cost + data + tail.
  const int n = 8;
  CollectiveOptions o;
  o.algorithm = "ring";
  CollectiveRunner chips(test::make_system("ring", {n}, 400, n, 700), o);
  const auto& c = chips.costs();
  const auto r = chips.time(8192);
  EXPECT_NEAR(r.time_s * 1e9, c.launch.value() + 2 * (n - 1) * c.cross_chip_step.value(), 1e-3 * 2 * (n - 1));
  EXPECT_NEAR(r.fixed_s * 1e9, r.time_s * 1e9 - 2 * (n - 1) * (1024.0 / 200 + 700) - (n - 1) * 1024.0 / 256, 1e-2);
  auto one = test::make_system("single", {1}, 400, 1, 700);
  one.chip.neuron_cores = n;
  CollectiveRunner on_chip(one, o);
  const double dma = 16 * 1000 * 1.115;  // the chip's collective DMA path, GB/s; 8 flows share it
  const double step = c.sync_handshake.value() + c.cc_step.value() + c.descriptor_setup.value() + 1024.0 / (dma / n);
  // Reduce-scatter steps add the receiver's adds: the last chunk, plus the backlog of adds
  // slower than the data (1 KiB at 256 B/ns vs the network's 1 KiB at dma / n).
  const double adds = 1024.0 / 256, net = 1024.0 / (dma / n);
  const double want = c.launch.value() + 2 * (n - 1) * step + (n - 1) * (adds + (adds - net));
  EXPECT_NEAR(on_chip.time(8192).time_s * 1e9, want, 1e-2);
  EXPECT_LT(on_chip.time(8192).time_s, r.time_s / 2);
}

namespace {
// Step `i` of another schedule, alone.
class OneStep : public ISchedule {
 public:
  OneStep(const ISchedule& s, int i) : s_(s), i_(i) {}
  int steps() const override { return 1; }
  int64_t transfers() const override { return 0; }
  void append_step(int, std::vector<Transfer>& out) const override { s_.append_step(i_, out); }

 private:
  const ISchedule& s_;
  int i_;
};
}  // namespace

TEST(Timing, RepeatedStepsAreSimulatedOnceWithTheSameResult) {
  // 64 ranks on a 4x4x4 torus, ring all-reduce: 126 steps of two kinds (reduce-scatter, all-
  // gather). Memoised, it simulates 2 of them; the total equals every step timed on its own.
  auto sys = test::make_system("torus3d", {4, 4, 4}, 1200, 64);
  const auto costs = collective_costs(sys, numerics::DType::F32, 1);
  fabric::Fabric fab(sys, {.chip_dma_bandwidth = costs.chip_dma_bandwidth});
  const CollectiveJob job{Op::AllReduce, int64_t(16) << 20, &fab};
  auto schedule = algorithm("ring").schedule(job);
  ScheduleTimer memo(fab, costs, 4);
  const ScheduleTiming t = memo.time(*schedule);
  EXPECT_EQ(t.steps, 126);
  EXPECT_EQ(t.simulated_steps, 2);
  double sum = costs.launch.value();
  for (int i = 0; i < schedule->steps(); ++i) {
    ScheduleTimer fresh(fab, costs, 4);
    sum += fresh.time(OneStep(*schedule, i)).total.value() - costs.launch.value();
  }
  EXPECT_NEAR(t.total.value(), sum, 1e-6 * sum);
}

TEST(Timing, AutoChoosesTheFastestAlgorithm) {
  auto sys = test::make_system("torus2d", {4, 4}, 400, 16);
  for (int64_t S : {int64_t(1024), int64_t(1) << 30}) {
    CollectiveOptions o;
    CollectiveRunner autorun(sys, o);
    const auto chosen = autorun.time(S);
    for (const char* a : {"ring", "direct", "halving-doubling"}) {
      o.algorithm = a;
      CollectiveRunner r(sys, o);
      EXPECT_LE(chosen.time_s, r.time(S).time_s) << a << " at " << S;
    }
  }
  // Small messages pay per-step costs: not the 30-step ring.
  CollectiveOptions o;
  CollectiveRunner r(sys, o);
  EXPECT_NE(r.time(1024).algorithm, "ring");
}
