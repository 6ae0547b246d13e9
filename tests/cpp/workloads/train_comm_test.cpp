// Closed-form group collectives: the bytes a rank sends equal the ring's 2(n-1)/n S however the
// group is split over nodes, and a one-node all-reduce matches the ring's step count and rate.
#include <gtest/gtest.h>

#include "trnsim/common/error.h"

#include "trnsim/collectives/collective.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/workloads/train_comm.h"

namespace trnsim::workloads {
namespace {

TrainLayout layout_for(const hw::SystemSpec& sys, int nodes) {
  TrainConfig c;
  c.nodes = nodes;
  c.global_batch = 1024 * 64;
  c.seq = 128;
  return make_layout(c, sys);
}

TEST(TrainComm, AllReduceSendsTwoNMinusOneOverNOfTheBuffer) {
  const hw::SystemSpec sys = hw::load_system("trn1.32xlarge");
  const TrainLayout l = layout_for(sys, 64);  // 2,048 ranks
  const TrainFabric fab(sys, l);
  const double S = 1e9;
  for (int n : {2, 8, 32, 64, 256, 2048}) {
    for (int64_t stride : {1, 2, 8, 32}) {
      if (n * stride > l.ranks) continue;
      const GroupPlacement g = place_group(l, n, stride);
      EXPECT_EQ(g.per_node * g.nodes, n);
      EXPECT_NEAR(fab.all_reduce(g, S).bytes_sent_per_rank, 2.0 * (n - 1) / n * S, 1e-3)
          << "n=" << n << " stride=" << stride;
      EXPECT_NEAR(fab.reduce_scatter(g, S).bytes_sent_per_rank, double(n - 1) / n * S, 1e-3);
      EXPECT_NEAR(fab.all_to_all(g, S).bytes_sent_per_rank, double(n - 1) / n * S, 1e-3);
    }
  }
}

TEST(TrainComm, OneNodeRingAtTheChipsCollectivePath) {
  const hw::SystemSpec sys = hw::load_system("trn1.32xlarge");
  const TrainLayout l = layout_for(sys, 1);
  const TrainFabric fab(sys, l);
  const auto costs = collectives::collective_costs(sys, numerics::DType::BF16, 2);
  const GroupPlacement g = place_group(l, 32, 1);
  ASSERT_EQ(g.nodes, 1);
  const double S = 1 << 30;
  // Both cores of every chip are in the ring: each gets half the chip's CC path (56.9 GB/s).
  const double rate = costs.chip_dma_bandwidth.value() / 2;
  const double step = costs.sync_handshake.value() + costs.cc_step.value() + costs.descriptor_setup.value() +
                      sys.topology.link_latency.value();
  const double expect = costs.launch.value() + 2 * 31 * (S / 32 / rate + step);
  EXPECT_NEAR(fab.all_reduce(g, S).time_ns, expect, 1e-6 * expect);
  // Same order as the flow-level simulation of a 32-rank ring on the torus (within 15%).
  collectives::CollectiveOptions o;
  o.ranks = 32;
  o.dtype = numerics::DType::BF16;
  o.algorithm = "ring";
  collectives::CollectiveRunner runner(sys, o);
  const double simulated = runner.time(int64_t(S)).time_s * 1e9;
  EXPECT_NEAR(fab.all_reduce(g, S).time_ns / simulated, 1.0, 0.15);
}

TEST(TrainComm, AcrossNodesEachRankGetsItsShareOfTheNodesEfa) {
  const hw::SystemSpec sys = hw::load_system("trn1.32xlarge");
  const TrainLayout l = layout_for(sys, 4);
  const TrainFabric fab(sys, l);
  EXPECT_NEAR(fab.inter_rank_gbps(), 100.0 / 32, 1e-9);  // 800 Gb/s over 32 NeuronCores
  const TrainFabric tapered(sys, l, 2.0);
  EXPECT_NEAR(tapered.inter_rank_gbps(), 50.0 / 32, 1e-9);
  EXPECT_THROW(TrainFabric(sys, l, 0.5), ConfigError);
}

TEST(TrainComm, NoScaleOutMeansOneNode) {
  const hw::SystemSpec sys = hw::load_system("trn3-ultraserver-gen2");
  TrainConfig c;
  c.nodes = 2;
  c.global_batch = 1152 * 2 * 4;  // 144 chips x 4 logical cores x 2 nodes
  c.seq = 128;
  const TrainLayout l = make_layout(c, sys);
  EXPECT_THROW(TrainFabric(sys, l), ConfigError);
}

}  // namespace
}  // namespace trnsim::workloads
