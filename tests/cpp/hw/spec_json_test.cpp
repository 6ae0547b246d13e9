// JSON of specs: unit-suffixed names carrying the same numbers as the structs.
#include "trnsim/hw/spec_json.h"

#include <gtest/gtest.h>

#include "trnsim/hw/spec_loader.h"
#include "trnsim/hw/specs_report.h"

namespace trnsim::hw {
namespace {

using numerics::DType;

TEST(SpecJson, Chip) {
  ChipSpec c = load_chip("trn2");
  nlohmann::json j = to_json(c);
  EXPECT_EQ(j["name"], "trn2");
  EXPECT_EQ(j["hbm_capacity_bytes"].get<int64_t>(), int64_t{96} << 30);
  EXPECT_DOUBLE_EQ(j["hbm_bandwidth_gbps"].get<double>(), 2900);
  EXPECT_DOUBLE_EQ(j["dense_tflops"]["bf16"].get<double>(), 667);
  EXPECT_DOUBLE_EQ(j["clock_derived_tflops"]["bf16"].get<double>(), c.clock_derived_tflops(DType::BF16).value());
  EXPECT_DOUBLE_EQ(j["roofline_knee_flop_per_byte"]["bf16"].get<double>(), c.roofline_knee(DType::BF16));
  EXPECT_DOUBLE_EQ(j["link_bandwidth_gbps"].get<double>(), 1280);
  EXPECT_DOUBLE_EQ(j["power_w"].get<double>(), 500);
  EXPECT_DOUBLE_EQ(j["core"]["dma"]["bandwidth_per_core_gbps"].get<double>(), 16 * 23);
  EXPECT_TRUE(to_json(load_chip("trn1"))["power_w"].is_null());
  // Every TensorE dtype has a dense peak; only published ones appear under published_dense_tflops.
  nlohmann::json trn3 = to_json(load_chip("trn3"));
  EXPECT_TRUE(trn3["dense_tflops"].contains("fp8_e4m3"));
  EXPECT_FALSE(trn3["published_dense_tflops"].contains("fp8_e4m3"));
}

TEST(SpecJson, System) {
  nlohmann::json j = to_json(load_system("trn1.32xlarge"));
  EXPECT_EQ(j["chips"], 16);
  EXPECT_EQ(j["chip"]["name"], "trn1");
  EXPECT_DOUBLE_EQ(j["price_usd_per_hour"].get<double>(), 21.50);
  EXPECT_DOUBLE_EQ(j["scale_out"]["bandwidth_per_instance_gbps"].get<double>(), 100);
  EXPECT_DOUBLE_EQ(j["total_dense_tflops"]["bf16"].get<double>(), 16 * 190);
  EXPECT_TRUE(to_json(load_system("trn2.48xlarge"))["price_usd_per_hour"].is_null());
  EXPECT_TRUE(to_json(load_system("trn3-ultraserver-gen2"))["scale_out"]["bandwidth_per_instance_gbps"].is_null());
}

TEST(SpecsReport, AllPresetsByDefaultElseExactlyThoseNamed) {
  nlohmann::json all = specs_json(select_specs({}, {}));
  EXPECT_EQ(all["chips"].size(), 4u);
  EXPECT_EQ(all["systems"].size(), 8u);  // incl. trn3-ultraserver-gen2-tiered
  nlohmann::json some = specs_json(select_specs({"trn2"}, {}));
  ASSERT_EQ(some["chips"].size(), 1u);
  EXPECT_EQ(some["chips"][0]["name"], "trn2");
  EXPECT_TRUE(some["systems"].empty());
}

}  // namespace
}  // namespace trnsim::hw
