// Event ordering and processor-sharing bandwidth against closed forms.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "trnsim/common/error.h"
#include "trnsim/sim/bandwidth.h"
#include "trnsim/sim/event_queue.h"
#include "trnsim/sim/time.h"

using namespace trnsim;
using namespace trnsim::sim;

namespace {
struct Recorder : Handler {
  std::vector<std::pair<int64_t, uint64_t>> seen;
  void on_event(Time now, uint64_t arg) override { seen.push_back({now.ps(), arg}); }
};

struct Done {
  std::vector<std::pair<uint64_t, double>> finished;  // tag, ns
  static void cb(void* ctx, Time now, uint64_t tag) {
    static_cast<Done*>(ctx)->finished.push_back({tag, now.ns()});
  }
};

double finish_of(const Done& d, uint64_t tag) {
  for (auto& [t, ns] : d.finished) if (t == tag) return ns;
  return -1;
}
}  // namespace

TEST(Time, ConversionsRoundUpToPicoseconds) {
  EXPECT_EQ(Time::from_ns(1.5).ps(), 1500);
  EXPECT_EQ(Time::cycles(512, GHz(2.8)).ps(), 182858);  // 182857.14 ps rounded up
  EXPECT_EQ(Time::cycles(7, GHz(1.0)).ps(), 7000);
  EXPECT_DOUBLE_EQ(Time::ps(2500000).us(), 2.5);
}

// The clock is int64 picoseconds: [-2^63, 2^63) ps, about +-106 days. A duration outside it (or
// NaN) was an undefined double -> int64 cast; it is a ShapeError naming the field.
TEST(Time, ConversionsOutsideTheClockAreTypedErrorsNamingTheField) {
  const double limit_ns = 0x1p63 / 1000.0;  // 9.22e15 ns
  EXPECT_EQ(Time::from_ns(9e15).ps(), 9'000'000'000'000'000'000);
  for (double ns : {std::nan(""), HUGE_VAL, -HUGE_VAL, limit_ns, 1e300, -2 * limit_ns}) {
    try {
      (void)Time::from_ns(ns, "core.semaphore_latency");
      ADD_FAILURE() << ns << " ns was accepted";
    } catch (const ShapeError& e) {
      EXPECT_NE(std::string(e.what()).find("core.semaphore_latency"), std::string::npos) << e.what();
    }
  }
  // 1e12 cycles of a 1 MHz clock: 10^6 s, inside; 10^16 cycles (10^10 s) is past it.
  EXPECT_NEAR(static_cast<double>(Time::cycles(1e12, GHz(1e-3)).ps()), 1e18, 1e3);
  EXPECT_THROW((void)Time::cycles(1e16, GHz(1e-3)), ShapeError);
  EXPECT_THROW((void)Time::cycles(1, GHz(0)), ShapeError);  // 1/0: infinite
}

TEST(Time, ArithmeticPastTheClockIsAnErrorNotAWrap) {
  const Time big = Time::ps(int64_t{1} << 62);
  EXPECT_EQ((big + Time::ps(5)).ps(), (int64_t{1} << 62) + 5);
  EXPECT_THROW((void)(big + big), ShapeError);
  EXPECT_THROW((void)(Time::max() + Time::ps(1)), ShapeError);
  Time t = big;
  EXPECT_THROW(t += big, ShapeError);
  EXPECT_THROW((void)(Time::ps(-(int64_t{1} << 62)) - big - big), ShapeError);
}

TEST(EventQueue, OrdersByTimeThenBySchedulingOrder) {
  EventQueue q;
  Recorder r;
  q.schedule(Time::ps(30), &r, 1);
  q.schedule(Time::ps(10), &r, 2);
  q.schedule(Time::ps(30), &r, 3);
  q.schedule(Time::ps(10), &r, 4);
  q.schedule(Time::ps(20), &r, 5);
  EXPECT_EQ(q.run().ps(), 30);
  std::vector<std::pair<int64_t, uint64_t>> want = {{10, 2}, {10, 4}, {20, 5}, {30, 1}, {30, 3}};
  EXPECT_EQ(r.seen, want);
  EXPECT_EQ(q.events_processed(), 5u);
}

TEST(EventQueue, RejectsThePast) {
  EventQueue q;
  Recorder r;
  q.schedule(Time::ps(10), &r);
  q.run();
  EXPECT_THROW(q.schedule(Time::ps(5), &r), Error);
}

TEST(Bandwidth, OneFlowRunsAtCapacity) {
  EventQueue q;
  Done d;
  BandwidthNetwork net(q, &Done::cb, &d);
  int link = net.add_resource("link", GBps(10));
  net.start_flow(1000, {link}, GBps(0), 7);
  q.run();
  EXPECT_NEAR(finish_of(d, 7), 100.0, 1e-3);
}

TEST(Bandwidth, TwoFlowsOnOneLinkEachGetHalf) {
  EventQueue q;
  Done d;
  BandwidthNetwork net(q, &Done::cb, &d);
  int link = net.add_resource("link", GBps(10));
  net.start_flow(1000, {link}, GBps(0), 1);
  net.start_flow(1000, {link}, GBps(0), 2);
  EXPECT_DOUBLE_EQ(net.rate_of(0), 5.0);
  EXPECT_DOUBLE_EQ(net.rate_of(1), 5.0);
  q.run();
  EXPECT_NEAR(finish_of(d, 1), 200.0, 1e-3);
  EXPECT_NEAR(finish_of(d, 2), 200.0, 1e-3);
  EXPECT_NEAR(net.busy_time(link).ns(), 200.0, 1e-3);
}

TEST(Bandwidth, ShortFlowLeavesAndTheOtherSpeedsUp) {
  // 10 B/ns shared: A=500 B, B=1500 B. Both at 5 until A ends at 100 ns (B has 1000 left),
  // then B alone at 10: ends at 200 ns.
  EventQueue q;
  Done d;
  BandwidthNetwork net(q, &Done::cb, &d);
  int link = net.add_resource("link", GBps(10));
  net.start_flow(500, {link}, GBps(0), 1);
  net.start_flow(1500, {link}, GBps(0), 2);
  q.run();
  EXPECT_NEAR(finish_of(d, 1), 100.0, 1e-3);
  EXPECT_NEAR(finish_of(d, 2), 200.0, 1e-3);
}

TEST(Bandwidth, CappedFlowGivesItsShareToOthers) {
  // Max-min fairness: a flow capped at 2 leaves 8 to the other.
  EventQueue q;
  Done d;
  BandwidthNetwork net(q, &Done::cb, &d);
  int link = net.add_resource("link", GBps(10));
  net.start_flow(200, {link}, GBps(2), 1);
  net.start_flow(800, {link}, GBps(0), 2);
  EXPECT_DOUBLE_EQ(net.rate_of(0), 2.0);
  EXPECT_DOUBLE_EQ(net.rate_of(1), 8.0);
  q.run();
  EXPECT_NEAR(finish_of(d, 1), 100.0, 1e-3);
  EXPECT_NEAR(finish_of(d, 2), 100.0, 1e-3);
}

TEST(Bandwidth, TwoLevelSharing) {
  // Two cores' DMA pools (8 each) share one HBM of 10: each flow gets 5.
  EventQueue q;
  Done d;
  BandwidthNetwork net(q, &Done::cb, &d);
  int a = net.add_resource("core0", GBps(8)), b = net.add_resource("core1", GBps(8));
  int hbm = net.add_resource("hbm", GBps(10));
  net.start_flow(500, {a, hbm}, GBps(0), 1);
  net.start_flow(500, {b, hbm}, GBps(0), 2);
  EXPECT_DOUBLE_EQ(net.rate_of(0), 5.0);
  // A third flow on core0 only (SBUF->SBUF): core0's 8 is split 4/4 ... max-min: flow1 limited
  // by core0 (4), flow2 gets the rest of HBM (6), flow3 gets 4.
  net.start_flow(400, {a}, GBps(0), 3);
  EXPECT_DOUBLE_EQ(net.rate_of(0), 4.0);
  EXPECT_DOUBLE_EQ(net.rate_of(1), 6.0);
  EXPECT_DOUBLE_EQ(net.rate_of(2), 4.0);
  q.run();
  EXPECT_EQ(d.finished.size(), 3u);
}
