// Collectives on the tiered Trn3 Gen2 preset vs the flat one (one rank per chip, 144 ranks),
// against closed forms:
//   ring all-gather: n-1 steps; in each every chip sends S/n to its ring successor at the same
//     time, and the step ends with the slowest transfer: the two that cross racks, at
//     min(128 GB/s, chip DMA path). Per step: handshake + CC step + one descriptor + piece/bw +
//     2 L (up, down), or the cross-chip step floor if longer. Flat: the same with min(2,048 GiB/s,
//     chip DMA path).
//   ring all-reduce: 2(n-1) such steps plus, in the n-1 reduce-scatter steps, the receiver's
//     reduction of its last pipeline chunk.
//   direct all-to-all: every chip sends S/n to each peer; its 72 cross-rack flows share its
//     128 GB/s cross-rack uplink (and receivers' downlinks, symmetrically), so the network part
//     is 72 (S/n) / 128 + 2 L; flat: 143 (S/n) / min(2,199, DMA) + 2 L. The fixed parts are the
//     same (one step, 143 transfers per rank), so the difference of the two is the network's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "trnsim/collectives/collective.h"
#include "trnsim/hw/spec_loader.h"

using namespace trnsim;
using namespace trnsim::collectives;

namespace {
constexpr int n = 144;
constexpr double L = 1000;  // both presets: 1,000 ns per traversal

CollectiveResult run(const char* system, Op op, const char* algorithm, int64_t S) {
  CollectiveOptions o;
  o.op = op;
  o.ranks_per_chip = 1;
  o.algorithm = algorithm;
  CollectiveRunner r(hw::load_system(system), o);
  return r.time(S);
}

const CollectiveCosts& costs() {
  static CollectiveRunner r(hw::load_system("trn3-ultraserver-gen2-tiered"), {.ranks_per_chip = 1});
  return r.costs();
}

double step_fixed() {
  const auto& c = costs();
  return c.sync_handshake.value() + c.cc_step.value() + c.descriptor_setup.value();
}

// A step between chips lasts at least this (collective_costs.h).
double floor() { return costs().cross_chip_step.value(); }

const int64_t kSizes[] = {int64_t(n) * 4 * 1024, int64_t(n) * 4 * (1 << 20)};  // 576 KiB, 576 MiB
}  // namespace

TEST(TieredSwitchCollectives, RingAllGatherIsBoundByTheCrossRackTier) {
  const double dma = costs().chip_dma_bandwidth.value();
  const double flat_bw = std::min(2048 * 1.073741824, dma);
  const double tier_bw = std::min(128.0, dma);
  for (int64_t S : kSizes) {
    const double piece = static_cast<double>(S) / n;
    auto want = [&](double bw) { return costs().launch.value() + (n - 1) * std::max(floor(), step_fixed() + piece / bw + 2 * L); };
    const double tiered = run("trn3-ultraserver-gen2-tiered", Op::AllGather, "ring", S).time_s * 1e9;
    const double flat = run("trn3-ultraserver-gen2", Op::AllGather, "ring", S).time_s * 1e9;
    EXPECT_NEAR(tiered, want(tier_bw), 1e-3 * n) << S;  // ps rounding per step
    EXPECT_NEAR(flat, want(flat_bw), 1e-3 * n) << S;
    EXPECT_GE(tiered, flat) << S;  // equal at 576 KiB, where both sit on the step floor
    if (S == kSizes[1]) EXPECT_GT(tiered, flat);
  }
}

TEST(TieredSwitchCollectives, RingAllReduceIsBoundByTheCrossRackTier) {
  const auto& c = costs();
  const double dma = c.chip_dma_bandwidth.value();
  for (auto [system, link] : {std::pair{"trn3-ultraserver-gen2-tiered", 128.0},
                              std::pair{"trn3-ultraserver-gen2", 2048 * 1.073741824}}) {
    const double bw = std::min(link, dma);
    for (int64_t S : kSizes) {
      const double piece = static_cast<double>(S) / n;
      const double tail = std::min(c.pipeline_chunk.value(), piece) / (c.reduce_elems_per_ns * 4);
      const double step = step_fixed() + piece / bw + 2 * L;
      const double want = c.launch.value() + (n - 1) * (std::max(floor(), step + tail) + std::max(floor(), step));
      EXPECT_NEAR(run(system, Op::AllReduce, "ring", S).time_s * 1e9, want, 1e-3 * 2 * n) << system << " " << S;
    }
  }
}

TEST(TieredSwitchCollectives, DirectAllToAllGapIsTheCrossRackTier) {
  const double dma = costs().chip_dma_bandwidth.value();
  // The chip's DMA path (~589 GB/s) is shared by its 143 flows, but max-min fairness leaves the
  // cross-rack flows at their link share 128/72 as long as that is below the DMA's even share:
  // they are link-bound from start to end, and finish last.
  ASSERT_GT(dma / 143, 128.0 / 72);
  for (int64_t S : kSizes) {
    const double piece = static_cast<double>(S) / n;
    const double tiered = run("trn3-ultraserver-gen2-tiered", Op::AllToAll, "direct", S).time_s * 1e9;
    const double flat = run("trn3-ultraserver-gen2", Op::AllToAll, "direct", S).time_s * 1e9;
    const double fixed = step_fixed() + costs().descriptor_setup.value() * (std::ceil(143.0 / costs().dma_rings_per_rank) - 1);
    const double want_gap = std::max(floor(), fixed + 72 * piece / 128 + 2 * L) -
                            std::max(floor(), fixed + 143 * piece / std::min(2048 * 1.073741824, dma) + 2 * L);
    EXPECT_NEAR(tiered - flat, want_gap, 1e-3 + 1e-9 * tiered) << S;
  }
}

TEST(TieredSwitchCollectives, AutoChoiceIsTheFastestAndNotTheRingOnTiers) {
  // On the tiered preset a ring runs every step at the cross-rack 128 GB/s, while a direct
  // exchange spreads each chip's traffic over all three tiers in one step: auto must not pick
  // the ring, and must be at least as fast as every algorithm that can run 144 ranks.
  for (int64_t S : kSizes) {
    const auto chosen = run("trn3-ultraserver-gen2-tiered", Op::AllReduce, "", S);
    EXPECT_NE(chosen.algorithm, "ring") << S;
    for (const char* a : {"ring", "direct", "hierarchical"})
      EXPECT_LE(chosen.time_s, run("trn3-ultraserver-gen2-tiered", Op::AllReduce, a, S).time_s) << a << " " << S;
  }
}
