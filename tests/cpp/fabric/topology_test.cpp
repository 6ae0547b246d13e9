// Topologies: route hop counts against closed forms, link bandwidths from the spec, ring orders.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "trnsim/common/error.h"
#include "trnsim/fabric/hierarchical_topology.h"
#include "trnsim/fabric/i_topology.h"
#include "trnsim/hw/spec_loader.h"

using namespace trnsim;
using namespace trnsim::fabric;

namespace {
hw::TopologySpec torus(std::vector<int> dims, double bw, std::vector<GBps> per_dim = {}) {
  hw::TopologySpec t;
  t.kind = dims.size() == 1 ? "ring" : dims.size() == 2 ? "torus2d" : "torus3d";
  t.dims = dims;
  t.bandwidth_per_chip = GBps(bw);
  t.bandwidth_per_dim = per_dim;
  t.link_latency = Nanoseconds(1000);
  return t;
}
int chips_of(const std::vector<int>& dims) { return std::accumulate(dims.begin(), dims.end(), 1, std::multiplies<>()); }

// Closed form: the sum over dimensions of the shorter way round.
int torus_distance(const std::vector<int>& dims, int a, int b) {
  int h = 0;
  for (int n : dims) {
    const int d = std::abs(a % n - b % n);
    h += std::min(d, n - d);
    a /= n;
    b /= n;
  }
  return h;
}

void expect_ring_order_is_neighbourly(const ITopology& t) {
  auto o = t.ring_order();
  ASSERT_EQ(static_cast<int>(o.size()), t.chips());
  auto sorted = o;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < t.chips(); ++i) ASSERT_EQ(sorted[i], i);
  for (size_t i = 0; i < o.size(); ++i) EXPECT_EQ(t.hops(o[i], o[(i + 1) % o.size()]), 1) << "at " << i;
}
}  // namespace

TEST(Torus, HopCountsAreTheTorusDistance) {
  for (auto dims : std::vector<std::vector<int>>{{4, 4}, {4, 4, 4}, {12}, {2, 3, 4}}) {
    auto t = make_topology(torus(dims, 384), chips_of(dims));
    int diameter = 0;
    for (int a = 0; a < t->chips(); ++a)
      for (int b = 0; b < t->chips(); ++b) {
        ASSERT_EQ(t->hops(a, b), torus_distance(dims, a, b)) << a << " -> " << b;
        diameter = std::max(diameter, t->hops(a, b));
      }
    int expect = 0;
    for (int n : dims) expect += n / 2;
    EXPECT_EQ(diameter, expect);
  }
}

TEST(Torus, RoutesFollowLinksAndEndAtTheDestination) {
  auto t = make_topology(torus({4, 4, 4}, 1280), 64);
  for (int a = 0; a < 64; ++a)
    for (int b = 0; b < 64; ++b) {
      std::vector<int> r;
      t->route(a, b, r);
      int at = a;
      for (int l : r) {
        ASSERT_EQ(t->links()[l].src, at);
        at = t->links()[l].dst;
      }
      EXPECT_EQ(at, b);
    }
}

TEST(Torus, HalfWayTiesSplitBetweenDirections) {
  // On a 4-ring, 0 -> 2 goes + and 1 -> 3 goes -: the two directions carry equal load.
  auto t = make_topology(torus({4}, 100), 4);
  std::vector<int> r;
  t->route(0, 2, r);
  EXPECT_EQ(t->links()[r[0]].kind, "x+");
  r.clear();
  t->route(1, 3, r);
  EXPECT_EQ(t->links()[r[0]].kind, "x-");
}

TEST(Torus, BandwidthPerLinkFromThePerChipFigure) {
  // trn1.32xlarge: 384 GB/s per chip over 4 links (2 dims x 2 directions) = 96 GB/s each.
  auto t = make_topology(torus({4, 4}, 384), 16);
  EXPECT_EQ(t->links().size(), 16u * 4);
  for (auto& l : t->links()) EXPECT_DOUBLE_EQ(l.bandwidth.value(), 96.0);
}

TEST(Torus, UltraServerZRingIsSlower) {
  // Trn2 UltraServer: 512/512 GB/s per chip in X/Y, 256 GB/s in Z: 256, 256, 128 per link.
  auto t = make_topology(torus({4, 4, 4}, 1280, {GBps(512), GBps(512), GBps(256)}), 64);
  for (auto& l : t->links()) EXPECT_DOUBLE_EQ(l.bandwidth.value(), l.kind[0] == 'z' ? 128.0 : 256.0) << l.kind;
}

TEST(Torus, RingOrderVisitsNeighbours) {
  expect_ring_order_is_neighbourly(*make_topology(torus({4, 4}, 1), 16));
  expect_ring_order_is_neighbourly(*make_topology(torus({4, 4, 4}, 1), 64));
  expect_ring_order_is_neighbourly(*make_topology(torus({12}, 1), 12));
}

TEST(Switch, EveryPairIsTwoHopsUpAndDown) {
  hw::TopologySpec s;
  s.kind = "switch";
  s.bandwidth_per_chip = GBps(2048);
  s.link_latency = Nanoseconds(1000);
  auto t = make_topology(s, 144);
  for (int a = 0; a < 144; a += 7)
    for (int b = 0; b < 144; b += 5) EXPECT_EQ(t->hops(a, b), a == b ? 0 : 2);
  std::vector<int> r;
  t->route(3, 9, r);
  EXPECT_EQ(t->links()[r[0]].kind, "up");
  EXPECT_EQ(t->links()[r[0]].src, 3);
  EXPECT_EQ(t->links()[r[1]].kind, "down");
  EXPECT_EQ(t->links()[r[1]].dst, 9);
}

TEST(Registry, UnknownKindNamesTheKnownOnes) {
  hw::TopologySpec s;
  s.kind = "hypercube";
  try {
    make_topology(s, 8);
    FAIL();
  } catch (const ConfigError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("hypercube"), std::string::npos);
    EXPECT_NE(m.find("torus2d"), std::string::npos);
    EXPECT_NE(m.find("switch"), std::string::npos);
  }
  auto kinds = topology_kinds();
  for (const char* k : {"torus2d", "torus3d", "ring", "switch", "single"})
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), k), kinds.end()) << k;
}

TEST(Hierarchical, CrossSystemRoutesTakeTheInstanceEfaPorts) {
  hw::ScaleOutSpec efa{"efa", GBps(400), Nanoseconds(15000)};
  auto inner = make_topology(torus({4, 4}, 1024), 16);
  HierarchicalTopology h(std::move(inner), 3, 16, efa);
  EXPECT_EQ(h.chips(), 48);
  EXPECT_EQ(h.hops(17, 18), 1);   // inside system 1: the inner route
  EXPECT_EQ(h.hops(1, 40), 2);    // system 0 -> 2: tx of instance 0, rx of instance 2
  std::vector<int> r;
  h.route(1, 40, r);
  EXPECT_EQ(r[0], h.tx_link(0));
  EXPECT_EQ(r[1], h.rx_link(2));
  EXPECT_DOUBLE_EQ(h.links()[r[0]].bandwidth.value(), 400.0);
  expect_ring_order_is_neighbourly(h.inner());
}

TEST(Hierarchical, NoScaleOutNetworkIsAClearError) {
  hw::ScaleOutSpec none{"none", GBps(0), Nanoseconds(0)};
  EXPECT_THROW(HierarchicalTopology(make_topology(torus({4, 4}, 1), 16), 2, 4, none), ConfigError);
}

TEST(Presets, SystemTopologiesBuild) {
  for (const char* name : {"trn1.32xlarge", "trn2.48xlarge", "trn2-ultraserver", "inf2.48xlarge", "trn1.2xlarge",
                           "trn3-ultraserver-gen1", "trn3-ultraserver-gen2"}) {
    auto sys = hw::load_system(name);
    auto t = make_topology(sys.topology, sys.chips);
    EXPECT_EQ(t->chips(), sys.chips) << name;
  }
}
