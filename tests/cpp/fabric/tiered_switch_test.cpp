// Tiered NeuronSwitch (Trn3 Gen2, tiered reading): the tier each pair uses, single-transfer times
// against bytes / tier bandwidth + 2 x tier latency (up and down), fair sharing of one tier link,
// the ring order, and the loader's errors for bad tier configs.
#include <gtest/gtest.h>

#include "trnsim/common/error.h"
#include "trnsim/fabric/fabric.h"
#include "trnsim/fabric/tiered_switch_topology.h"
#include "trnsim/hw/spec_loader.h"

using namespace trnsim;
using namespace trnsim::fabric;

namespace {
constexpr const char* kPreset = "trn3-ultraserver-gen2-tiered";

// Chip pairs of the preset (4 chips per server, 18 servers per rack) and the tier they use.
struct Pair {
  int a, b, tier;
  double gbps;
};
const Pair kPairs[] = {{0, 3, 0, 256}, {5, 4, 0, 256}, {0, 4, 1, 320}, {71, 0, 1, 320},
                       {0, 72, 2, 128}, {143, 70, 2, 128}};

// Time (ns) from send to delivery of one transfer alone on the preset's fabric, one rank per
// chip and a DMA path far wider than any tier so the tier link is the only limit.
double alone_ns(int a, int b, double bytes) {
  auto sys = hw::load_system(kPreset);
  Fabric f(sys, {.ranks_per_chip = 1, .chip_dma_bandwidth = GBps(1e6)});
  f.send(a, b, Bytes(bytes), sim::Time(), 7);
  std::vector<Delivery> d;
  EXPECT_TRUE(f.advance(d));
  EXPECT_EQ(d.size(), 1u);
  return d.empty() ? 0 : d[0].at.ps() / 1e3;
}
}  // namespace

TEST(TieredSwitch, RoutesUseTheTierOfTheClosestSharedGroup) {
  auto sys = hw::load_system(kPreset);
  auto t = make_topology(sys.topology, sys.chips);
  ASSERT_EQ(t->kind(), "tiered_switch");
  const auto& ts = dynamic_cast<const TieredSwitchTopology&>(*t);
  const char* names[] = {"server", "rack", "cross-rack"};
  for (const Pair& p : kPairs) {
    EXPECT_EQ(ts.tier_of(p.a, p.b), p.tier) << p.a << "->" << p.b;
    std::vector<int> r;
    t->route(p.a, p.b, r);
    ASSERT_EQ(r.size(), 2u);
    const Link& up = t->links()[r[0]];
    const Link& down = t->links()[r[1]];
    EXPECT_EQ(up.src, p.a);
    EXPECT_EQ(down.dst, p.b);
    EXPECT_EQ(up.kind, std::string(names[p.tier]) + "-up");
    EXPECT_EQ(down.kind, std::string(names[p.tier]) + "-down");
    EXPECT_DOUBLE_EQ(up.bandwidth.value(), p.gbps);
    EXPECT_DOUBLE_EQ(down.bandwidth.value(), p.gbps);
  }
  EXPECT_EQ(t->hops(9, 9), 0);
  // Every route of every pair is two links, and links are indexed within links().
  for (int a = 0; a < 144; a += 5)
    for (int b = 0; b < 144; b += 7) {
      std::vector<int> r;
      t->route(a, b, r);
      EXPECT_EQ(r.size(), a == b ? 0u : 2u);
      for (int l : r) EXPECT_LT(l, static_cast<int>(t->links().size()));
    }
  const std::string d = t->describe();
  EXPECT_EQ(d.find('\n'), std::string::npos);
  EXPECT_NE(d.find("2 racks x 18 servers x 4 chips"), std::string::npos) << d;
  EXPECT_NE(d.find("cross-rack 128 GB/s"), std::string::npos) << d;
}

TEST(TieredSwitch, SingleTransferTakesBytesOverTierBandwidthPlusLatencyUpAndDown) {
  const double L = 1000;  // the preset's latency per traversal, every tier
  for (const Pair& p : kPairs)
    for (double bytes : {4096.0, 64.0 * 1024 * 1024}) {
      const double want = bytes / p.gbps + 2 * L;
      EXPECT_NEAR(alone_ns(p.a, p.b, bytes), want, 1e-3) << p.a << "->" << p.b << " " << bytes;
    }
}

TEST(TieredSwitch, FlowsSharingOneTierUplinkSplitItAndOtherTiersAreSeparate) {
  auto sys = hw::load_system(kPreset);
  Fabric f(sys, {.ranks_per_chip = 1, .chip_dma_bandwidth = GBps(1e6)});
  const double B = 1e6;
  // 0 -> 1 and 0 -> 2 share chip 0's server uplink (256): 128 each, both done at B/128 + 2L.
  f.send(0, 1, Bytes(B), sim::Time(), 1);
  f.send(0, 2, Bytes(B), sim::Time(), 2);
  // 0 -> 4 (rack tier) and 0 -> 100 (cross-rack) run on their own links at full rate.
  f.send(0, 4, Bytes(B), sim::Time(), 3);
  f.send(0, 100, Bytes(B), sim::Time(), 4);
  std::vector<Delivery> d;
  ASSERT_TRUE(f.advance(d));  // first deliveries happen after every flow has started
  ASSERT_EQ(f.network().active_flows() + d.size(), 4u);
  std::map<uint64_t, double> at;
  do
    for (auto& x : d) at[x.tag] = x.at.ps() / 1e3;
  while ((d.clear(), f.advance(d)));
  ASSERT_EQ(at.size(), 4u);
  EXPECT_NEAR(at[1], B / 128 + 2000, 1e-3);
  EXPECT_NEAR(at[2], B / 128 + 2000, 1e-3);
  EXPECT_NEAR(at[3], B / 320 + 2000, 1e-3);
  EXPECT_NEAR(at[4], B / 128 + 2000, 1e-3);
  // Two senders into one downlink: 1 -> 3 and 2 -> 3 share chip 3's server downlink.
  Fabric g(sys, {.ranks_per_chip = 1, .chip_dma_bandwidth = GBps(1e6)});
  g.send(1, 3, Bytes(B), sim::Time(), 1);
  g.send(2, 3, Bytes(B), sim::Time(), 2);
  d.clear();
  ASSERT_TRUE(g.advance(d));
  ASSERT_EQ(d.size(), 2u);
  EXPECT_NEAR(d[0].at.ps() / 1e3, B / 128 + 2000, 1e-3);
}

TEST(TieredSwitch, RingOrderCrossesRacksTwiceAndServersAsRarelyAsPossible) {
  auto sys = hw::load_system(kPreset);
  auto t = make_topology(sys.topology, sys.chips);
  const auto& ts = dynamic_cast<const TieredSwitchTopology&>(*t);
  auto order = t->ring_order();
  ASSERT_EQ(order.size(), 144u);
  int per_tier[3] = {0, 0, 0};
  for (size_t i = 0; i < order.size(); ++i) per_tier[ts.tier_of(order[i], order[(i + 1) % order.size()])]++;
  // 2 racks: a ring must cross between them at least twice; 36 servers: at least 36 server
  // boundaries, 2 of them the rack crossings; the rest stay in a server (144 - 36).
  EXPECT_EQ(per_tier[2], 2);
  EXPECT_EQ(per_tier[1], 34);
  EXPECT_EQ(per_tier[0], 108);
}

namespace {
std::string topology_yaml(const std::string& body) {
  return "name: t\nchip: trn3\nchips: 16\nchips_per_instance: 4\ntopology:\n" + body + "scale_out:\n  kind: none\n";
}
const std::string kGoodTiers =
    "  tiers:\n"
    "    - {name: server, bandwidth_per_chip: 256 GB/s, latency: 500 ns}\n"
    "    - {name: rack, bandwidth_per_chip: 320 GB/s, latency: 1000 ns}\n"
    "    - {name: cross-rack, bandwidth_per_chip: 128 GB/s, latency: 2 us}\n";
const std::string kHead = "  kind: tiered_switch\n  chips_per_server: 4\n  servers_per_rack: 2\n";

std::string error_of(const std::string& yaml) {
  try {
    hw::parse_system(yaml, "sys.yaml", {});
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST(TieredSwitch, LoaderReadsTiersAndSummaries) {
  auto s = hw::parse_system(topology_yaml(kHead + kGoodTiers), "sys.yaml", {});
  ASSERT_EQ(s.topology.tiers.size(), 3u);
  EXPECT_EQ(s.topology.chips_per_server, 4);
  EXPECT_EQ(s.topology.servers_per_rack, 2);
  EXPECT_DOUBLE_EQ(s.topology.tiers[2].latency.value(), 2000);
  EXPECT_DOUBLE_EQ(s.topology.bandwidth_per_chip.value(), 256 + 320 + 128);
  EXPECT_DOUBLE_EQ(s.topology.link_latency.value(), 500);
  auto t = make_topology(s.topology, s.chips);
  EXPECT_EQ(t->links().size(), 16u * 3 * 2);
}

TEST(TieredSwitch, BadTierConfigsNameTheKeyAndLine) {
  struct Case {
    std::string yaml, want1, want2;
  };
  const Case cases[] = {
      // Tiers out of order: line 10 is the first tier.
      {topology_yaml(kHead + "  tiers:\n    - {name: rack, bandwidth_per_chip: 1 GB/s, latency: 1 ns}\n"
                             "    - {name: server, bandwidth_per_chip: 1 GB/s, latency: 1 ns}\n"
                             "    - {name: cross-rack, bandwidth_per_chip: 1 GB/s, latency: 1 ns}\n"),
       "sys.yaml:10: topology.tiers[0].name", "'server'"},
      // A misspelt key: unknown, with a suggestion.
      {topology_yaml(kHead + "  tiers:\n    - {name: server, bandwith_per_chip: 1 GB/s, latency: 1 ns}\n"),
       "sys.yaml:10: topology.tiers[0].bandwith_per_chip: unknown key", "did you mean 'bandwidth_per_chip'"},
      {topology_yaml(kHead + "  tiers:\n    - {name: server, bandwidth_per_chip: 1 GB/s, latency: 1 ns}\n"),
       "sys.yaml:10: topology.tiers", "3 tiers"},
      {topology_yaml(kHead + "  tiers:\n    - {name: server, bandwidth_per_chip: 0 GB/s, latency: 1 ns}\n"
                             "    - {name: rack, bandwidth_per_chip: 1 GB/s, latency: 1 ns}\n"
                             "    - {name: cross-rack, bandwidth_per_chip: 1 GB/s, latency: 1 ns}\n"),
       "sys.yaml:10: topology.tiers[0].bandwidth_per_chip", "positive bandwidth"},
      {topology_yaml(kHead + "  tiers:\n    - {name: server, bandwidth_per_chip: 1 GB/s}\n"
                             "    - {name: rack, bandwidth_per_chip: 1 GB/s, latency: 1 ns}\n"
                             "    - {name: cross-rack, bandwidth_per_chip: 1 GB/s, latency: 1 ns}\n"),
       "topology.tiers[0].latency: missing", "duration"},
      {topology_yaml("  kind: tiered_switch\n  chips_per_server: 4\n  servers_per_rack: 3\n" + kGoodTiers),
       "sys.yaml:8: topology.servers_per_rack", "multiple of chips_per_server x servers_per_rack"},
      {topology_yaml(kHead + "  bandwidth_per_chip: 704 GB/s\n" + kGoodTiers),
       "topology.bandwidth_per_chip", "nothing for kind tiered_switch"},
      {topology_yaml("  kind: switch\n  bandwidth_per_chip: 1 GB/s\n  link_latency: 1 ns\n" + kGoodTiers),
       "sys.yaml:10: topology.tiers", "only for kind tiered_switch"},
      {topology_yaml("  kind: tiered_switch\n  servers_per_rack: 2\n" + kGoodTiers),
       "topology.chips_per_server: missing", "positive integer"},
  };
  for (const Case& c : cases) {
    const std::string m = error_of(c.yaml);
    EXPECT_NE(m.find(c.want1), std::string::npos) << m << "\n--- for\n" << c.yaml;
    EXPECT_NE(m.find(c.want2), std::string::npos) << m << "\n--- for\n" << c.yaml;
  }
}
