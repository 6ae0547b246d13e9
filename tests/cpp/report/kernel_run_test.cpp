// run_kernel, the back end of `trnsim kernel`: functional runs check against the reference,
// timing runs carry no data, the JSON has the summary plus kernel facts, bad inputs are
// ShapeErrors naming the tensor and its shape.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "trnsim/common/error.h"
#include "trnsim/report/kernel_run.h"

namespace trnsim::report {
namespace {

TEST(KernelRun, FunctionalRunChecksEveryOutput) {
  KernelRunOptions o;
  o.kernel = "layernorm";
  o.chip = "trn1";
  o.params = {{"rows", "130"}, {"cols", "300"}};
  KernelRun r = run_kernel(o);
  EXPECT_TRUE(r.functional);
  ASSERT_EQ(r.checks.size(), 1u);
  EXPECT_EQ(r.checks[0].name, "y");
  EXPECT_TRUE(r.ok()) << r.checks[0].violations;
  EXPECT_GT(r.checks[0].max_abs_error, 0);  // bf16 rounds: a zero error would mean no check
  auto j = r.to_json();
  EXPECT_EQ(j.at("kernel"), "layernorm");
  EXPECT_EQ(j.at("dtype"), "bf16");
  EXPECT_EQ(j.at("mode"), "functional");
  EXPECT_EQ(j.at("args").at("cols"), 300);
  EXPECT_DOUBLE_EQ(j.at("time_s").get<double>(), r.result.total.ns() * 1e-9);
  EXPECT_TRUE(j.at("check").at("y").at("ok").get<bool>());
}

TEST(KernelRun, TimingOnlyHasNoDataAndWritesTheTrace) {
  auto path = std::filesystem::temp_directory_path() / "trnsim_kernel_run_test" / "t.json";
  KernelRunOptions o;
  o.kernel = "matmul";
  o.params = {{"m", "256"}, {"k", "256"}, {"n", "512"}};
  o.data = DataMode::Timing;
  o.trace_path = path.string();
  KernelRun r = run_kernel(o);
  EXPECT_FALSE(r.functional);
  EXPECT_TRUE(r.checks.empty() && r.result.outputs.empty());
  EXPECT_EQ(r.trace.events, r.result.instructions);
  EXPECT_EQ(std::filesystem::file_size(path), r.trace.bytes);
  EXPECT_EQ(r.to_json().at("trace").at("path"), path.string());
  // The simulator's own records: every event inside the run, on a named thread.
  std::ifstream f(path);
  auto doc = nlohmann::json::parse(f);
  std::set<std::pair<int, int>> named;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name") named.insert({e["pid"].get<int>(), e["tid"].get<int>()});
  const double total_us = r.result.total.ns() * 1e-3;
  size_t n = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++n;
    EXPECT_TRUE(named.count({e["pid"].get<int>(), e["tid"].get<int>()}));
    EXPECT_LE(e["ts"].get<double>() + e["dur"].get<double>(), total_us + 1e-6);
  }
  EXPECT_EQ(n, r.result.instructions);
  std::filesystem::remove_all(path.parent_path());
}

TEST(KernelRun, AutoModeGoesTimingOnlyForLargeShapes) {
  KernelRunOptions o;
  o.kernel = "matmul";
  o.params = {{"m", "4096"}, {"k", "4096"}, {"n", "4096"}};
  std::string said;
  o.progress = [&](const std::string& s) { said += s + "\n"; };
  KernelRun r = run_kernel(o);
  EXPECT_FALSE(r.functional);
  EXPECT_NE(said.find("timing only"), std::string::npos) << said;
}

TEST(KernelRun, GivenInputsAreUsedAndCheckedForSize) {
  KernelRunOptions o;
  o.kernel = "transpose";
  o.params = {{"rows", "2"}, {"cols", "3"}};
  o.dtype = "fp32";
  o.inputs = {{"x", {1, 2, 3, 4, 5, 6}}};
  KernelRun r = run_kernel(o);
  EXPECT_EQ(r.result.outputs.at("y"), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  o.inputs = {{"x", {1, 2, 3}}};
  try {
    run_kernel(o);
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[2, 3] fp32"), std::string::npos) << e.what();
  }
  o.inputs = {{"w", {1}}};
  EXPECT_THROW(run_kernel(o), ShapeError);
}

}  // namespace
}  // namespace trnsim::report
