// Traffic: arrival processes against their moments, length distributions, and the Azure trace
// reader on the shipped trace and on broken files (one-line errors naming row and field).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "trnsim/common/error.h"
#include "trnsim/workloads/traffic_arrivals.h"
#include "trnsim/workloads/traffic_lengths.h"
#include "trnsim/workloads/traffic_trace.h"
#include "trnsim/workloads/traffic_workload.h"

namespace trnsim::workloads {
namespace {

const std::string kConv = std::string(TRNSIM_SOURCE_DIR) + "/data/azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv";

std::pair<double, double> gap_mean_cv2(const std::vector<double>& t) {
  double s = 0, s2 = 0;
  for (size_t i = 1; i < t.size(); ++i) {
    const double g = t[i] - t[i - 1];
    s += g, s2 += g * g;
  }
  const double n = static_cast<double>(t.size() - 1), mean = s / n;
  return {mean, (s2 / n - mean * mean) / (mean * mean)};
}

// Poisson: exponential gaps (CV^2 = 1); gamma: CV^2 = 1 / burstiness (vLLM's definition). With
// 200,000 gaps the standard errors are well under 1 %; the tolerance is 2 %.
TEST(Traffic, PoissonAndGammaGapsHaveTheirMeanAndVariance) {
  for (double burstiness : {1.0, 0.25, 4.0}) {
    std::mt19937_64 rng(3);
    ArrivalSpec s{burstiness == 1.0 ? "poisson" : "gamma", 20, burstiness};
    const auto t = arrival_times(s, 200000, 0, rng);
    const auto [mean, cv2] = gap_mean_cv2(t);
    EXPECT_NEAR(mean, 1.0 / 20, 0.02 / 20) << burstiness;
    EXPECT_NEAR(cv2, 1.0 / burstiness, 0.04 / burstiness) << burstiness;
  }
}

TEST(Traffic, OnOffSendsOnlyInTheOnPeriodsAtTheMeanRate) {
  std::mt19937_64 rng(5);
  ArrivalSpec s{"onoff", 10, 1, 5, 15};
  const auto t = arrival_times(s, 0, 4000, rng);
  for (double x : t) ASSERT_LT(std::fmod(x, 20.0), 5.0) << x;
  EXPECT_NEAR(static_cast<double>(t.size()), 40000, 4 * std::sqrt(40000.0));
}

TEST(Traffic, RampRaisesTheRateLinearly) {
  std::mt19937_64 rng(9);
  ArrivalSpec s{"ramp", 10, 1, 10, 10, 50, 0};
  const auto t = arrival_times(s, 0, 1000, rng);
  // Expected count = integral of the rate = (10 + 50) / 2 x 1000.
  EXPECT_NEAR(static_cast<double>(t.size()), 30000, 4 * std::sqrt(30000.0));
  const auto first = std::count_if(t.begin(), t.end(), [](double x) { return x < 100; });
  const auto last = std::count_if(t.begin(), t.end(), [](double x) { return x >= 900; });
  EXPECT_NEAR(static_cast<double>(first), 1200, 4 * std::sqrt(1200.0));  // rate 10..14 over 100 s
  EXPECT_NEAR(static_cast<double>(last), 4800, 4 * std::sqrt(4800.0));   // rate 46..50 over 100 s
}

TEST(Traffic, LengthsFixedUniformAndFittedToTheTrace) {
  std::mt19937_64 rng(1);
  const auto u = parse_length_spec("100:200", "input");
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const int32_t v = draw_length(u, rng);
    ASSERT_GE(v, 100);
    ASSERT_LE(v, 200);
    sum += v;
  }
  EXPECT_NEAR(sum / 100000, 150, 0.5);
  // The fit: mean and standard deviation of ln(ContextTokens) of the trace, recomputed here.
  const auto rows = read_azure_trace(kConv);
  double s = 0, s2 = 0;
  int n = 0;
  for (const auto& r : rows)
    if (r.input > 0) s += std::log(r.input), s2 += std::log(r.input) * std::log(r.input), ++n;
  const auto f = parse_length_spec("fit:" + kConv, "input");
  EXPECT_NEAR(f.mu, s / n, 1e-9);
  EXPECT_NEAR(f.sigma, std::sqrt(s2 / n - (s / n) * (s / n)), 1e-9);
  EXPECT_THROW(parse_length_spec("-3", "input"), ConfigError);
  EXPECT_THROW(parse_length_spec("9:3", "output"), ConfigError);
}

TEST(Traffic, TheShippedConversationTraceReadsWhole) {
  const auto rows = read_azure_trace(kConv);
  EXPECT_EQ(rows.size(), 19366u);  // the data README's row count
  EXPECT_EQ(rows[0].input, 374);
  EXPECT_EQ(rows[0].output, 44);
  EXPECT_NEAR(rows[1].time_s, 50.995169 - 46.68059, 1e-6);  // 18:15:46.6805900 -> 18:15:50.9951690
}

std::string write(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() / ("trnsim_serve_" + name);
  std::ofstream(p) << text;
  return p.string();
}

void expect_error(const std::string& text, const std::string& needle, int64_t context = 0) {
  const std::string path = write("bad.csv", text);
  try {
    TrafficOptions o;
    o.trace = path;
    RequestSource src(o, context);
    src.all();
    FAIL() << "no error for " << needle;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

TEST(Traffic, BrokenTracesAreOneLineErrorsNamingTheRowAndField) {
  expect_error("TIMESTAMP,ContextTokens\n1,2\n", "no column 'GeneratedTokens'");
  expect_error("TIMESTAMP,ContextTokens,GeneratedTokens\n1.0,5,3\n2.0,-4,3\n", "row 3, ContextTokens: -4 is negative");
  expect_error("TIMESTAMP,ContextTokens,GeneratedTokens\n2.0,5,3\n1.0,4,3\n", "row 3, TIMESTAMP 1.0 is earlier");
  expect_error("TIMESTAMP,ContextTokens,GeneratedTokens\n1.0,5000,3000\n", "row 2, ContextTokens 5000 + GeneratedTokens 3000", 4096);
  expect_error("TIMESTAMP,ContextTokens,GeneratedTokens\n1.0,5\n", "row 2 has 2 columns");
  expect_error("TIMESTAMP,ContextTokens,GeneratedTokens\nnoon,5,3\n", "row 2, TIMESTAMP 'noon'");
}

TEST(Traffic, TraceReplayCyclesForMoreRequests) {
  TrafficOptions o;
  o.trace = kConv;
  o.requests = 19366 * 2 + 5;
  RequestSource src(o, 0);
  const auto r = src.all();
  ASSERT_EQ(r.size(), 19366u * 2 + 5);
  for (size_t i = 1; i < r.size(); ++i) ASSERT_GE(r[i].arrival_s, r[i - 1].arrival_s);
  EXPECT_EQ(r[19366].input, r[0].input);
}

}  // namespace
}  // namespace trnsim::workloads
