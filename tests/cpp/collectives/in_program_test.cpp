// A collective inside a compiled program: the same schedule and per-step costs as standalone,
// started by one cross-engine semaphore hop (the DMA fixed overhead) instead of the fitted
// nccom-test launch.
#include <gtest/gtest.h>

#include "trnsim/collectives/collective.h"
#include "trnsim/collectives/i_collective_algorithm.h"
#include "trnsim/collectives/schedule_timer.h"
#include "trnsim/fabric/fabric.h"
#include "trnsim/hw/spec_loader.h"

using namespace trnsim;
using namespace trnsim::collectives;

TEST(InProgram, DiffersFromStandaloneByTheLaunchOnly) {
  const auto sys = hw::load_system("trn1.32xlarge");
  for (const char* alg : {"ring", "direct", "halving-doubling"}) {
    CollectiveOptions o;
    o.ranks = 32;
    o.dtype = numerics::DType::BF16;
    o.algorithm = alg;
    CollectiveRunner standalone(sys, o);
    o.launch = Launch::InProgram;
    CollectiveRunner in_program(sys, o);
    EXPECT_DOUBLE_EQ(in_program.costs().launch.value(), sys.chip.core.dma.fixed_overhead.value());
    for (int64_t s : {int64_t(16) << 10, int64_t(1) << 20, int64_t(64) << 20}) {
      const double want = standalone.time(s).time_s - (standalone.costs().launch.value() - in_program.costs().launch.value()) * 1e-9;
      EXPECT_NEAR(in_program.time(s).time_s, want, 1e-12) << alg << " " << s;
    }
  }
}

TEST(InProgram, SmallAllReduceIsTensOfMicrosecondsAndPicksAFewStepAlgorithm) {
  // Llama-2-70B's decode all-reduce on trn1 TP 32: 16 KiB of bf16. In-program it costs the
  // steps alone (2 steps of direct: handshake + CC step + 11 descriptor rounds each, plus
  // the torus hops), below the standalone 1 KiB floor of nccom-test (58 us).
  CollectiveOptions o;
  o.ranks = 32;
  o.dtype = numerics::DType::BF16;
  o.launch = Launch::InProgram;
  CollectiveRunner r(hw::load_system("trn1.32xlarge"), o);
  const auto res = r.time(16 << 10);
  EXPECT_EQ(res.algorithm, "direct");
  EXPECT_GT(res.time_s, 10e-6);
  EXPECT_LT(res.time_s, 40e-6);
}

TEST(InProgram, AllReduceUsesTheMeshOnlyUpToOnePipelineChunk) {
  // Size classes: the mesh (direct) while a rank's buffer fits one pipeline chunk (128
  // partitions x 4 KiB = 512 KiB), the pipelined algorithms above it; the choice among those
  // stays the fastest, so it is never slower than any of them and never direct.
  const auto sys = hw::load_system("inf2.48xlarge");
  CollectiveOptions o;
  o.ranks = 24;
  o.dtype = numerics::DType::BF16;
  o.launch = Launch::InProgram;
  CollectiveRunner r(sys, o);
  EXPECT_EQ(r.costs().pipeline_chunk.value(), 512.0 * 1024);
  EXPECT_EQ(r.time(512 << 10).algorithm, "direct");
  const auto big = r.time(1 << 20);
  EXPECT_NE(big.algorithm, "direct");
  for (const char* alg : {"ring", "hierarchical"}) {
    CollectiveOptions n = o;
    n.algorithm = alg;
    EXPECT_LE(big.time_s, CollectiveRunner(sys, n).time(1 << 20).time_s) << alg;
  }
  o.launch = Launch::Standalone;  // nccom-test's auto choice is unchanged: the fastest
  EXPECT_EQ(CollectiveRunner(sys, o).time(1 << 20).algorithm, "direct");
}

namespace {
// A named in-program all-reduce of `bytes` bf16 on `sys`, timed with the given step floor.
double all_reduce_ns(const hw::SystemSpec& sys, int ranks, const char* alg, int64_t bytes, double floor_ns) {
  auto costs = collective_costs(sys, numerics::DType::BF16, sys.chip.neuron_cores, Launch::InProgram);
  costs.cross_chip_step = Nanoseconds(floor_ns);
  fabric::Fabric fab(sys, {.ranks = ranks, .chip_dma_bandwidth = costs.chip_dma_bandwidth});
  const CollectiveJob job{Op::AllReduce, bytes / 2, &fab};
  ScheduleTimer timer(fab, costs, 2);
  return timer.time(*algorithm(alg).schedule(job)).total.value();
}
}  // namespace

TEST(InProgram, CrossChipStepFloorBindsOnPrefillAllReducesNotOnDecodeOnes) {
  // Decode (16 KiB, the mesh): each step's 8-11 descriptor rounds and hops already exceed the
  // 12 us floor, so the time is that of the same steps without it.
  for (auto [system, ranks] : {std::pair{"inf2.48xlarge", 24}, std::pair{"trn1.32xlarge", 32}}) {
    const auto sys = hw::load_system(system);
    EXPECT_DOUBLE_EQ(all_reduce_ns(sys, ranks, "direct", 16 << 10, 12'000), all_reduce_ns(sys, ranks, "direct", 16 << 10, 0))
        << system;
  }
  // Prefill (1 MiB) on inf2, hierarchical over 24 ranks: 2 steps inside a chip and 22 between
  // chips, whose ~3.5 us of set-up, hop and 43 KiB of data sit under the floor. Raising the
  // floor by 12 us therefore adds exactly 22 x 12 us (the in-chip steps never see it).
  const auto inf2 = hw::load_system("inf2.48xlarge");
  const double none = all_reduce_ns(inf2, 24, "hierarchical", 1 << 20, 0);
  const double with = all_reduce_ns(inf2, 24, "hierarchical", 1 << 20, 12'000);
  const double doubled = all_reduce_ns(inf2, 24, "hierarchical", 1 << 20, 24'000);
  EXPECT_NEAR(doubled - with, 22 * 12'000.0, 1e-3);
  EXPECT_GT(with - none, 22 * (12'000.0 - 5'000));  // each cross-chip step was < 5 us
  EXPECT_LT(with - none, 22 * 12'000.0);
}
