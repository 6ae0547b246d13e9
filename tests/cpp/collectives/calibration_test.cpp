// Calibration: nccom-test, all-reduce fp32, 2 ranks on trn1 (HARDWARE.md): 1 KiB 58 us,
// 1 MiB 68 us, 16 MiB 332 us, 1 GiB 18,930 us. nccom-test's ranks are NeuronCores, so the two
// ranks are the two cores of one Trainium1 chip. The simulated trn1 lands within 20% of each
// (the band); docs/collectives.md explains the mechanism and the two fitted constants.
#include <gtest/gtest.h>

#include "trnsim/collectives/collective.h"
#include "trnsim/hw/spec_loader.h"

using namespace trnsim;
using namespace trnsim::collectives;

TEST(Calibration, NccomTestTwoRankAllReduceOnTrn1) {
  for (const char* system : {"trn1.32xlarge", "trn1.2xlarge"}) {
    CollectiveOptions o;
    o.ranks = 2;
    CollectiveRunner r(hw::load_system(system), o);
    EXPECT_EQ(r.fabric().chip_of(0), r.fabric().chip_of(1));  // one chip, two NeuronCores
    const struct {
      int64_t bytes;
      double us;
    } published[] = {{1024, 58}, {1 << 20, 68}, {16 << 20, 332}, {int64_t(1) << 30, 18930}};
    for (auto p : published) {
      const double us = r.time(p.bytes).time_s * 1e6;
      EXPECT_NEAR(us / p.us, 1.0, 0.20) << system << " " << p.bytes << " B: simulated " << us << " us, published "
                                        << p.us << " us";
    }
  }
}
