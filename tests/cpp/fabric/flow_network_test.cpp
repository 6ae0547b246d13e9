// The event-driven flow network against closed forms for start/finish times under sharing.
#include <gtest/gtest.h>

#include "trnsim/fabric/flow_network.h"

using trnsim::GBps;
using trnsim::fabric::Delivery;
using trnsim::fabric::FlowNetwork;
using trnsim::sim::Time;

TEST(FlowNetwork, TwoFlowsShareALinkAndFinishTogether) {
  FlowNetwork net;
  const int link = net.add_resource(GBps(100));  // 100 bytes per ns
  const int path[] = {link};
  net.start(Time(), path, 1e6, Time::from_ns(500), 1);
  net.start(Time(), path, 1e6, Time::from_ns(500), 2);
  std::vector<Delivery> d;
  ASSERT_TRUE(net.advance(d));
  ASSERT_EQ(d.size(), 2u);  // one event for both: symmetric flows drain at the same tick
  // Each at 50 B/ns: 1e6 / 50 = 20,000 ns, then the latency.
  EXPECT_EQ(d[0].at.ps(), Time::from_ns(20'000 + 500).ps());
  EXPECT_FALSE(net.advance(d));
}

TEST(FlowNetwork, ALateFlowSlowsTheFirstOnlyWhileTheyOverlap) {
  // Flow A (1000 B) alone at 10 B/ns from 0; flow B (300 B) joins at 40 ns. A has 600 B left;
  // both run at 5 B/ns; B drains at 40 + 60 = 100 ns, A has 300 B left, alone again: +30 ns.
  FlowNetwork net;
  const int link = net.add_resource(GBps(10));
  const int path[] = {link};
  net.start(Time(), path, 1000, Time(), 1);
  net.start(Time::from_ns(40), path, 300, Time(), 2);
  std::vector<Delivery> d;
  ASSERT_TRUE(net.advance(d));
  EXPECT_EQ(d.back().tag, 2u);
  EXPECT_EQ(d.back().at.ps(), Time::from_ns(100).ps());
  ASSERT_TRUE(net.advance(d));
  EXPECT_EQ(d.back().tag, 1u);
  EXPECT_EQ(d.back().at.ps(), Time::from_ns(130).ps());
}

TEST(FlowNetwork, RatesFollowTheNarrowestSharedResource) {
  // Two flows share a fat link (100); one also crosses a thin one (10): rates 90 and 10.
  FlowNetwork net;
  const int fat = net.add_resource(GBps(100)), thin = net.add_resource(GBps(10));
  const int p1[] = {fat}, p2[] = {fat, thin};
  net.start(Time(), p1, 900, Time(), 1);
  net.start(Time(), p2, 100, Time(), 2);
  std::vector<Delivery> d;
  ASSERT_TRUE(net.advance(d));
  EXPECT_EQ(d.size(), 2u);  // 900/90 = 100/10 = 10 ns
  EXPECT_EQ(d[0].at.ps(), Time::from_ns(10).ps());
}

TEST(FlowNetwork, AnEmptyFlowArrivesAfterItsLatency) {
  FlowNetwork net;
  const int link = net.add_resource(GBps(1));
  const int path[] = {link};
  net.start(Time::from_ns(7), path, 0, Time::from_ns(3), 9);
  std::vector<Delivery> d;
  ASSERT_TRUE(net.advance(d));
  EXPECT_EQ(d[0].tag, 9u);
  EXPECT_EQ(d[0].at.ps(), Time::from_ns(10).ps());
}

TEST(FlowNetwork, ResetForgetsFlows) {
  FlowNetwork net;
  const int link = net.add_resource(GBps(1));
  const int path[] = {link};
  net.start(Time(), path, 10, Time(), 1);
  net.reset();
  std::vector<Delivery> d;
  EXPECT_FALSE(net.advance(d));
  EXPECT_TRUE(net.idle());
}
