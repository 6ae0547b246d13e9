// Algorithm schedules against closed forms: steps, and bytes each rank sends.
#include <gtest/gtest.h>

#include "test_system.h"
#include "trnsim/collectives/collective.h"
#include "trnsim/common/error.h"

using namespace trnsim;
using namespace trnsim::collectives;

namespace {
CollectiveResult run(Op op, const std::string& algo, int n, int64_t size) {
  auto sys = test::make_system("switch", {}, 1000, n);
  CollectiveOptions o;
  o.op = op;
  o.algorithm = algo;
  CollectiveRunner r(sys, o);
  return r.time(size);
}
}  // namespace

TEST(Schedules, RingAllReduceSends2NMinus1OverNOfTheBufferPerRank) {
  for (int n : {2, 3, 8, 12, 16}) {
    const int64_t S = 4 * 1024 * 1024 * 3;  // divisible by 3 and 12
    auto r = run(Op::AllReduce, "ring", n, S);
    EXPECT_EQ(r.steps, 2 * (n - 1)) << n;
    EXPECT_EQ(r.bytes_sent_per_rank, 2 * (n - 1) * S / n) << n;
  }
}

TEST(Schedules, HalvingDoublingTakes2Log2NSteps) {
  for (int n : {2, 4, 8, 16, 32}) {
    const int64_t S = 1 << 24;
    auto r = run(Op::AllReduce, "halving-doubling", n, S);
    int log = 0;
    while ((1 << log) < n) ++log;
    EXPECT_EQ(r.steps, 2 * log) << n;
    EXPECT_EQ(r.bytes_sent_per_rank, 2 * (n - 1) * S / n) << n;
  }
  EXPECT_THROW(run(Op::AllReduce, "halving-doubling", 12, 1 << 20), UnsupportedError);
}

TEST(Schedules, DirectIsOneStepPerHalf) {
  const int n = 8;
  const int64_t S = 1 << 20;
  EXPECT_EQ(run(Op::AllReduce, "direct", n, S).steps, 2);
  auto a2a = run(Op::AllToAll, "direct", n, S);
  EXPECT_EQ(a2a.steps, 1);
  EXPECT_EQ(a2a.bytes_sent_per_rank, (n - 1) * S / n);
  auto p = run(Op::Permute, "direct", n, S);
  EXPECT_EQ(p.bytes_sent_per_rank, S);
}

TEST(Schedules, GatherAndScatterHalvesSendNMinus1OverN) {
  const int n = 16;
  const int64_t S = 1 << 22;
  for (auto op : {Op::AllGather, Op::ReduceScatter}) {
    auto r = run(op, "ring", n, S);
    EXPECT_EQ(r.steps, n - 1);
    EXPECT_EQ(r.bytes_sent_per_rank, (n - 1) * S / n);
  }
}

TEST(Schedules, BusBandwidthFollowsNccl) {
  EXPECT_DOUBLE_EQ(bus_factor(Op::AllReduce, 16), 2.0 * 15 / 16);
  EXPECT_DOUBLE_EQ(bus_factor(Op::AllGather, 16), 15.0 / 16);
  EXPECT_DOUBLE_EQ(bus_factor(Op::AllToAll, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(Op::Permute, 4), 1.0);
  auto r = run(Op::AllReduce, "ring", 4, 1 << 20);
  EXPECT_DOUBLE_EQ(r.busbw_gbps, r.algbw_gbps * 1.5);
}

TEST(Schedules, BadInputsAreClearErrors) {
  auto sys = test::make_system("switch", {}, 1000, 8);
  EXPECT_THROW(parse_op("all-smash"), UnsupportedError);
  CollectiveOptions o;
  o.op = Op::AllGather;
  CollectiveRunner r(sys, o);
  EXPECT_THROW(r.time(1000), ShapeError);  // 250 fp32 elements do not split into 8 pieces
  EXPECT_THROW(r.time(1001), ShapeError);  // not whole fp32 elements
  o.algorithm = "butterfly";
  EXPECT_THROW(CollectiveRunner(sys, o), UnsupportedError);
  o.algorithm = "ring";
  o.op = Op::AllToAll;
  CollectiveRunner ring_a2a(sys, o);
  EXPECT_THROW(ring_a2a.time(1 << 20), UnsupportedError);
  o = {};
  o.ranks = 9;
  EXPECT_THROW(CollectiveRunner(sys, o), ConfigError);
}
