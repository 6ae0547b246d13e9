// The job's fabric: rank placement, the per-chip collective DMA path, and error messages.
#include <gtest/gtest.h>

#include "trnsim/common/error.h"
#include "trnsim/fabric/fabric.h"
#include "trnsim/hw/spec_loader.h"

using namespace trnsim;
using namespace trnsim::fabric;

TEST(Fabric, RanksAreNeuronCoresPlacedInOrder) {
  auto sys = hw::load_system("trn1.32xlarge");
  Fabric f(sys, {.ranks = 0, .chip_dma_bandwidth = GBps(100)});
  EXPECT_EQ(f.ranks(), 32);  // 16 chips x 2 NeuronCores
  EXPECT_EQ(f.chip_of(0), 0);
  EXPECT_EQ(f.chip_of(1), 0);
  EXPECT_EQ(f.chip_of(2), 1);
}

TEST(Fabric, TwoRanksOfOneChipShareOnlyItsDmaPath) {
  auto sys = hw::load_system("trn1.32xlarge");
  Fabric f(sys, {.ranks = 2, .chip_dma_bandwidth = GBps(100)});
  std::vector<int> path;
  sim::Time lat;
  f.path(0, 1, path, lat);
  ASSERT_EQ(path.size(), 1u);
  EXPECT_EQ(path[0], f.dma_resource(0));
  EXPECT_EQ(lat.ps(), 0);
  // Both directions at once share the chip's path: 50 each, so 1e5 bytes take 2,000 ns.
  f.send(0, 1, Bytes(1e5), sim::Time(), 0);
  f.send(1, 0, Bytes(1e5), sim::Time(), 1);
  std::vector<Delivery> d;
  ASSERT_TRUE(f.advance(d));
  EXPECT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].at.ps(), sim::Time::from_ns(2000).ps());
}

TEST(Fabric, ChipToChipCrossesDmaThenLinks) {
  auto sys = hw::load_system("trn1.32xlarge");
  Fabric f(sys, {.ranks_per_chip = 1, .chip_dma_bandwidth = GBps(1000)});
  std::vector<int> path;
  sim::Time lat;
  f.path(0, 5, path, lat);  // chip (0,0) -> (1,1): two hops
  EXPECT_EQ(path.size(), 3u);
  EXPECT_EQ(lat.ps(), sim::Time::from_ns(2 * sys.topology.link_latency.value()).ps());
}

TEST(Fabric, TooManyRanksSaysWhatFits) {
  auto sys = hw::load_system("trn1.32xlarge");
  try {
    Fabric f(sys, {.ranks = 64, .chip_dma_bandwidth = GBps(1)});
    FAIL();
  } catch (const ConfigError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("64 ranks exceed trn1.32xlarge"), std::string::npos) << m;
    EXPECT_NE(m.find("= 32"), std::string::npos) << m;
  }
}

TEST(Fabric, CopiesJoinedByEfa) {
  auto sys = hw::load_system("trn2-ultraserver");
  Fabric f(sys, {.systems = 4, .ranks_per_chip = 1, .chip_dma_bandwidth = GBps(400)});
  EXPECT_EQ(f.ranks(), 256);
  EXPECT_EQ(f.ranks_per_system(), 64);
  EXPECT_EQ(f.ranks_per_instance(), 16);
  EXPECT_EQ(f.topology().hops(0, 64), 2);
}
