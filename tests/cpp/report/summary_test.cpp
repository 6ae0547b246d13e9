// The summary against closed forms for the hand-built run of report_fixture.h.
#include <gtest/gtest.h>

#include <algorithm>

#include "report_fixture.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/report/summary.h"

namespace trnsim::report {
namespace {

using testing::fixture_program;
using testing::fixture_result;
using testing::kHbmBytes;
using testing::kMatmulFlops;

class SummaryTest : public ::testing::Test {
 protected:
  hw::ChipSpec chip = hw::load_chip("trn1");
  isa::Program program = fixture_program();
  core::RunResult result = fixture_result();
  RunSummary s = summarize(program, result, chip);
};

TEST_F(SummaryTest, TimeAndCounts) {
  EXPECT_DOUBLE_EQ(s.time_s, 3e-6);
  EXPECT_EQ(s.cores_used, 1);
  EXPECT_EQ(s.instructions, 6u);
  EXPECT_EQ(s.opcode_counts.at("matmul"), 2u);
  EXPECT_EQ(s.opcode_counts.at("dma"), 4u);
  EXPECT_EQ(s.engine_counts.at("TensorE"), 2u);
  EXPECT_EQ(s.engine_counts.at("DMA"), 4u);
}

TEST_F(SummaryTest, Utilisation) {
  ASSERT_EQ(s.units.size(), 4u);
  EXPECT_EQ(s.units[0].unit, "core0.TensorE");
  EXPECT_DOUBLE_EQ(s.units[0].utilisation, 1000.0 / 3000.0);
  EXPECT_DOUBLE_EQ(s.units[3].utilisation, 1200.0 / 3000.0);  // dma2: its two loads overlap
  ASSERT_EQ(s.dma_active.size(), 1u);
  // Union of [0,1000], [0,800], [400,1200], [2000,3000].
  EXPECT_DOUBLE_EQ(s.dma_active[0], 2200.0 / 3000.0);
}

TEST_F(SummaryTest, TensorPeakIsClockDerivedForOneCore) {
  const auto& t = chip.core.tensor;
  double per_core_tflops = t.rows * t.cols * 2.0 * t.clock.value() * t.dtype_rate.at(numerics::DType::BF16) / 1e3;
  EXPECT_TRUE(s.has_matmul);
  EXPECT_EQ(s.matmul_dtype, numerics::DType::BF16);
  EXPECT_NEAR(s.peak_tflops, per_core_tflops, 1e-9);
  EXPECT_DOUBLE_EQ(s.tflops, 2 * kMatmulFlops / 3e-6 * 1e-12);
  EXPECT_NEAR(s.peak_fraction, s.tflops / per_core_tflops, 1e-12);
}

TEST_F(SummaryTest, BandwidthAndRoofline) {
  EXPECT_DOUBLE_EQ(s.hbm_bytes, kHbmBytes);
  EXPECT_DOUBLE_EQ(s.bandwidth_gbps, kHbmBytes / 3000.0);  // bytes per ns
  double dma_peak = chip.core.dma.bandwidth_per_engine.value() * chip.core.dma.engines;
  EXPECT_DOUBLE_EQ(s.dma_bandwidth_gbps, dma_peak);
  EXPECT_NEAR(s.bandwidth_fraction, kHbmBytes / 3000.0 / std::min(dma_peak, chip.hbm.bandwidth.value()), 1e-12);
  EXPECT_DOUBLE_EQ(s.arithmetic_intensity, 64.0);  // 2 x 16.8 MFLOP over 512 KiB
  EXPECT_DOUBLE_EQ(s.roofline_knee, chip.roofline_knee(numerics::DType::BF16));
  EXPECT_EQ(s.bound, "memory");
}

TEST_F(SummaryTest, JsonHasUnitSuffixedKeys) {
  auto j = to_json(s);
  EXPECT_DOUBLE_EQ(j.at("time_s").get<double>(), 3e-6);
  EXPECT_DOUBLE_EQ(j.at("hbm_bytes").get<double>(), kHbmBytes);
  EXPECT_DOUBLE_EQ(j.at("bandwidth_gbps").get<double>(), s.bandwidth_gbps);
  EXPECT_DOUBLE_EQ(j.at("tflops").get<double>(), s.tflops);
  EXPECT_EQ(j.at("matmul_dtype"), "bf16");
  EXPECT_EQ(j.at("bound"), "memory");
  EXPECT_EQ(j.at("units").size(), 4u);
  EXPECT_EQ(j.at("instruction_counts").at("by_opcode").at("dma"), 4);
  // Round trip through text: valid JSON.
  EXPECT_EQ(nlohmann::json::parse(j.dump()), j);
}

TEST_F(SummaryTest, TableNamesEveryComputeEngineAndTheDmaRow) {
  std::string t = format_table(s);
  EXPECT_NE(t.find("core0 TensorE"), std::string::npos) << t;
  EXPECT_NE(t.find("33.3%"), std::string::npos) << t;
  EXPECT_NE(t.find("core0 DMA x3"), std::string::npos) << t;
  EXPECT_NE(t.find("73.3%"), std::string::npos) << t;  // DMA active 2200 / 3000
  EXPECT_NE(t.find("memory-bound"), std::string::npos) << t;
}

TEST(SummaryNoMatmul, ReportsNoPeakAndNoBound) {
  auto chip = hw::load_chip("trn2");
  isa::Program p = fixture_program();
  p.cores[0].stream(isa::Engine::Tensor).clear();
  core::RunResult r = fixture_result();
  r.tensor_flops = 0;
  RunSummary s = summarize(p, r, chip);
  EXPECT_FALSE(s.has_matmul);
  EXPECT_EQ(s.tflops, 0);
  EXPECT_TRUE(s.bound.empty());
  EXPECT_TRUE(to_json(s).at("bound").is_null());
}

}  // namespace
}  // namespace trnsim::report
