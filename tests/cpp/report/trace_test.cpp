// The trace: valid JSON in the trace-event format, one named thread per engine and DMA queue,
// one complete event per record inside the run's time, properly nested tracks, and an HBM
// bandwidth counter that integrates to the bytes moved.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "report_fixture.h"
#include "trnsim/common/error.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/report/trace.h"

namespace trnsim::report {
namespace {

nlohmann::json trace_json(const TraceOptions& o = {}, TraceStats* st = nullptr) {
  auto chip = hw::load_chip("trn1");
  std::ostringstream os;
  TraceStats s = write_trace(os, testing::fixture_program(), testing::fixture_result(), chip, o);
  if (st) *st = s;
  EXPECT_EQ(s.bytes, os.str().size());
  return nlohmann::json::parse(os.str());  // throws (fails the test) on invalid JSON
}

TEST(Trace, IsTraceEventJsonWithSummaryFacts) {
  TraceStats st;
  auto j = trace_json({}, &st);
  ASSERT_TRUE(j.at("traceEvents").is_array());
  EXPECT_EQ(j.at("otherData").at("event_count"), 6);
  EXPECT_DOUBLE_EQ(j.at("otherData").at("total_time_s").get<double>(), 3e-6);
  EXPECT_EQ(j.at("otherData").at("chip"), "trn1");
  EXPECT_EQ(st.events, 6u);
}

TEST(Trace, OneNamedThreadPerEngineAndQueue) {
  auto j = trace_json();
  std::set<std::string> names;
  std::set<std::pair<int, int>> tids;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      names.insert(e["args"]["name"].get<std::string>());
      EXPECT_TRUE(tids.insert({e["pid"].get<int>(), e["tid"].get<int>()}).second) << "duplicate thread";
    }
  }
  std::set<std::string> expect = {"core0 TensorE", "core0 VectorE", "core0 ScalarE", "core0 GpSimd",
                                  "core0 dma0",    "core0 dma1",    "core0 dma2",    "core0 dma2 +1"};
  EXPECT_EQ(names, expect);
}

TEST(Trace, EventsCarryProfileFactsAndStayInsideTheRun) {
  auto j = trace_json();
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> per_track;
  int n = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++n;
    double ts = e["ts"], dur = e["dur"];
    EXPECT_GE(ts, 0);
    EXPECT_LE(ts + dur, 3.0 + 1e-12);  // microseconds
    const auto& a = e["args"];
    for (const char* k : {"opcode", "engine", "timestamp_ns", "duration_ns", "dtype", "bytes", "flops", "operands"})
      EXPECT_TRUE(a.contains(k)) << k;
    EXPECT_DOUBLE_EQ(a["timestamp_ns"].get<double>(), ts * 1e3);
    if (a["opcode"] == "matmul") {
      EXPECT_EQ(a["engine"], "TensorE");
      EXPECT_EQ(a["dtype"], "bf16");
      EXPECT_DOUBLE_EQ(a["flops"].get<double>(), testing::kMatmulFlops);
      EXPECT_DOUBLE_EQ(dur, 0.5);
    }
    per_track[{e["pid"], e["tid"]}].push_back({ts, ts + dur});
  }
  EXPECT_EQ(n, 6);
  for (auto& [track, iv] : per_track) {  // no two events of one track overlap
    std::sort(iv.begin(), iv.end());
    for (size_t i = 1; i < iv.size(); ++i) EXPECT_LE(iv[i - 1].second, iv[i].first + 1e-12);
  }
}

TEST(Trace, TimestampsArePicosecondExact) {
  auto chip = hw::load_chip("trn1");
  auto r = testing::fixture_result();
  r.records[3].start_ps = 1'000'001;  // 1000.001 ns
  std::ostringstream os;
  write_trace(os, testing::fixture_program(), r, chip);
  EXPECT_NE(os.str().find("\"ts\":1.000001"), std::string::npos);
}

TEST(Trace, BandwidthCounterIntegratesToHbmBytes) {
  auto j = trace_json({.bandwidth_bins = 30});
  std::vector<std::pair<double, double>> samples;  // (ts us, GB/s)
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "C") samples.push_back({e["ts"], e["args"]["GB/s"]});
  ASSERT_EQ(samples.size(), 31u);  // 30 bins and a closing zero
  double bytes = 0;
  for (size_t i = 0; i + 1 < samples.size(); ++i)
    bytes += samples[i].second * (samples[i + 1].first - samples[i].first) * 1e3;  // GB/s x ns
  EXPECT_NEAR(bytes, testing::kHbmBytes, 1e-6 * testing::kHbmBytes);
  // The first 100 ns carry dma0 (131072 B over 1000 ns) and dma2's first load (65536 B / 800 ns).
  EXPECT_NEAR(samples[0].second, 131072.0 / 1000 + 65536.0 / 800, 1e-9);
}

TEST(Trace, NoCounterWhenDisabledAndNoOperands) {
  auto j = trace_json({.bandwidth_bins = 0, .operands = false});
  for (const auto& e : j["traceEvents"]) {
    EXPECT_NE(e["ph"], "C");
    if (e["ph"] == "X") EXPECT_FALSE(e["args"].contains("operands"));
  }
}

TEST(Trace, UnwritablePathIsAnErrorNamingIt) {
  auto chip = hw::load_chip("trn1");
  try {
    write_trace_file("/proc/trnsim-no/such/trace.json", testing::fixture_program(), testing::fixture_result(), chip);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/proc/trnsim-no"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trnsim::report
