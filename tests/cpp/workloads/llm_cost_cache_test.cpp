// The cost cache shared by concurrent runs: two caches on one file stand for two processes (their
// locks are per open file, so they exclude each other as processes do). A value one measured is
// read by the other, bit for bit, without measuring; a shape being measured is waited for, not
// measured twice; two runs that plan the same shapes split them; values read back equal a fresh
// measurement with no disk cache, exactly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "trnsim/hw/spec_loader.h"
#include "trnsim/workloads/cost_plan.h"
#include "trnsim/workloads/llm_cost.h"
#include "trnsim/workloads/llm_cost_cache.h"
#include "trnsim/workloads/llm_generation.h"
#include "trnsim/workloads/llm_node_cost.h"

using namespace trnsim;
using namespace trnsim::workloads;

namespace {

// A fresh $XDG_CACHE_HOME for one test, removed after it.
struct TempCacheHome {
  std::filesystem::path dir;
  explicit TempCacheHome(const std::string& name)
      : dir(std::filesystem::temp_directory_path() / (name + "-" + std::to_string(getpid()))) {
    std::filesystem::remove_all(dir);
    setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  }
  ~TempCacheHome() {
    unsetenv("XDG_CACHE_HOME");
    std::filesystem::remove_all(dir);
  }
};

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

TEST(CostCacheSharing, AMissReadsWhatAnotherWriterAppendedSinceStart) {
  TempCacheHome home("trnsim_cache_share");
  CostCache a("scope", true), b("scope", true);  // both opened on an empty file
  // Values whose shortest decimal forms differ from their 17-digit ones, a subnormal, a huge one.
  const std::vector<double> v{0.1 + 0.2, 1.0 / 3.0, 5e-324, 1.7976931348623157e308, std::nextafter(1.0, 2.0)};
  int measured_a = 0, measured_b = 0;
  EXPECT_TRUE(same_bits(a.get_or_measure("k", v.size(), [&] { ++measured_a; return v; }), v));
  EXPECT_TRUE(same_bits(b.get_or_measure("k", v.size(), [&] { ++measured_b; return v; }), v));
  EXPECT_EQ(measured_a, 1);
  EXPECT_EQ(measured_b, 0);  // read from the file a appended to, not measured again
  // A line with another number of values (an older format) is a miss, measured and appended.
  EXPECT_EQ(b.get_or_measure("k", 1, [&] { ++measured_b; return std::vector<double>{2.5}; }), std::vector<double>{2.5});
  EXPECT_EQ(measured_b, 1);
}

TEST(CostCacheSharing, AnIncompleteLineIsReadOnceItIsComplete) {
  TempCacheHome home("trnsim_cache_torn");
  CostCache a("scope", true), reader("scope", true);
  a.get_or_measure("first", 1, [] { return std::vector<double>{1.0}; });
  {  // another writer's line, half written
    std::ofstream f(a.path(), std::ios::app);
    f << "second 2.";
  }
  int measured = 0;
  EXPECT_EQ(reader.get_or_measure("first", 1, [&] { ++measured; return std::vector<double>{9.0}; })[0], 1.0);
  EXPECT_FALSE(reader.get_values("second"));  // not "second 2"
  {
    std::ofstream f(a.path(), std::ios::app);
    f << "5\n";
  }
  EXPECT_EQ(reader.get_or_measure("second", 1, [&] { ++measured; return std::vector<double>{9.0}; })[0], 2.5);
  EXPECT_EQ(measured, 0);
}

TEST(CostCacheSharing, AKeyBeingMeasuredIsWaitedForNotMeasuredTwice) {
  TempCacheHome home("trnsim_cache_lock");
  CostCache a("scope", true), b("scope", true);
  std::atomic<bool> a_measuring{false};
  std::vector<double> from_a;
  std::thread t([&] {
    from_a = a.get_or_measure("slow", 2, [&] {
      a_measuring = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      return std::vector<double>{0.7, 1.1};
    });
  });
  while (!a_measuring) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  int measured_b = 0;
  const auto from_b = b.get_or_measure("slow", 2, [&] { ++measured_b; return std::vector<double>{0.0, 0.0}; });
  t.join();
  EXPECT_EQ(measured_b, 0);
  EXPECT_EQ(b.lock_waits(), 1);
  EXPECT_TRUE(same_bits(from_b, from_a));
  // Another key is not held up by the one being measured.
  EXPECT_EQ(b.get_or_measure("other", 1, [] { return std::vector<double>{3.0}; })[0], 3.0);
  EXPECT_EQ(b.lock_waits(), 1);
}

TEST(CostCacheSharing, ValuesAnotherRunMeasuredEqualAFreshMeasurementBitForBit) {
  TempCacheHome home("trnsim_cache_fresh");
  const auto chip = hw::load_chip("trn1");
  NodeCostOptions disk, memory;
  memory.use_disk_cache = false;
  NodeCosts measurer(chip, disk), reader(chip, disk);  // the reader opened the cache while it was empty
  NodeCosts fresh(chip, memory);
  const auto bits = [](const NodeCost& c) {
    std::vector<double> v{c.s};
    v.insert(v.end(), std::begin(c.e.j), std::end(c.e.j));
    return v;
  };
  const auto all = [&](NodeCosts& nc) {
    return std::vector<std::vector<double>>{bits(nc.measure_matmul(200, 512, 1024)),
                                            bits(nc.measure_attention(2, 192, 192, 64, true)),
                                            bits(nc.measure_attention(8, 1, 1024, 128, false)),
                                            bits(nc.measure_pointwise(64, 1024, 512, 512)), bits(nc.measure_norms(32, 2048))};
  };
  const auto measured = all(measurer), read = all(reader), reference = all(fresh);
  EXPECT_EQ(measurer.simulations(), 5);
  EXPECT_EQ(reader.simulations(), 0);
  for (size_t i = 0; i < measured.size(); ++i) {
    EXPECT_TRUE(same_bits(read[i], reference[i])) << "shape " << i;
    EXPECT_TRUE(same_bits(measured[i], reference[i])) << "shape " << i;
  }
}

TEST(CostCacheSharing, TwoRunsPlanningTheSameShapesSplitThem) {
  // Measured as asked, the second run would queue behind the first for every shape and measure
  // none; planned, each takes the shapes the other is not measuring.
  TempCacheHome home("trnsim_cache_plan");
  constexpr int kShapes = 12;
  static constexpr auto kMeasure = std::chrono::milliseconds(40);  // a sleep: the CPU's load does not stretch it
  std::atomic<int> total{0};
  const auto run = [&](int& measured, std::vector<double>& got) {
    CostCache cache("scope", true);
    CostPlan plan;
    for (int k = 0; k < kShapes; ++k) {
      const auto v = cache.get_or_measure("shape" + std::to_string(k), 1, [&measured, &total, k] {
        ++measured, ++total;
        std::this_thread::sleep_for(kMeasure);
        return std::vector<double>{k + 0.5};
      });
      EXPECT_EQ(v, std::vector<double>{kPlaceholderCost});  // noted, not measured yet
    }
    EXPECT_EQ(plan.size(), static_cast<size_t>(kShapes));
    plan.measure();
    for (int k = 0; k < kShapes; ++k) got.push_back(cache.get_or_measure("shape" + std::to_string(k), 1, [] {
      return std::vector<double>{-1.0};  // never: every shape is known after measure()
    })[0]);
  };
  int measured_a = 0, measured_b = 0;
  std::vector<double> got_a, got_b;
  const auto t0 = std::chrono::steady_clock::now();
  std::thread a([&] { run(measured_a, got_a); }), b([&] { run(measured_b, got_b); });
  a.join();
  b.join();
  const auto wall = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(total, kShapes);  // each shape measured once between the two
  // Side by side: about half of one after another (queuing for each shape in turn takes all of it).
  EXPECT_LT(wall, kShapes * kMeasure * 0.8);
  EXPECT_GE(measured_a, kShapes / 4);
  EXPECT_GE(measured_b, kShapes / 4);
  std::vector<double> want;
  for (int k = 0; k < kShapes; ++k) want.push_back(k + 0.5);
  EXPECT_EQ(got_a, want);
  EXPECT_EQ(got_b, want);
}

TEST(CostCacheSharing, APlannedGenerationEqualsAWarmAndAMemoryOnlyOne) {
  // simulate_generation plans a cold cache's shapes (a pass with placeholders, then the real one):
  // the same bits as a warm run and as a run with no disk cache. (The 64 points of
  // bench/sweep_speedup.py --command llm give the same JSON as before plans, docs/reports-and-sweeps.md.)
  TempCacheHome home("trnsim_cache_plan_gen");
  Deployment d;
  d.system = "trn1.32xlarge";
  d.tp = 8;
  GenerationRequest r;
  r.batch = 2, r.input = 200, r.output = 16;
  const ModelDesc m = load_model("llama-3-8b");
  StepCostOptions memory;
  memory.use_disk_cache = false;
  TrainiumStepCost cold(m, d), warm(m, d), fresh(m, d, memory);
  const GenerationResult gc = simulate_generation(cold, r), gw = simulate_generation(warm, r), gf = simulate_generation(fresh, r);
  EXPECT_GT(gc.simulations, 10);
  EXPECT_EQ(gw.simulations, 0);
  EXPECT_EQ(gf.simulations, gc.simulations);
  for (const auto* g : {&gw, &gf}) {
    EXPECT_EQ(g->ttft_s, gc.ttft_s);
    EXPECT_EQ(g->tpot_s, gc.tpot_s);
    EXPECT_EQ(g->energy.total(), gc.energy.total());
    EXPECT_EQ(g->peak_power_w, gc.peak_power_w);
  }
}
