// The cost cache shared by concurrent runs: two caches on one file stand for two processes (their
// locks are per open file, so they exclude each other as processes do). A value one measured is
// read by the other, bit for bit, without measuring; a shape being measured is waited for, not
// measured twice; values read back equal a fresh measurement with no disk cache, exactly.
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
#include "trnsim/workloads/llm_cost_cache.h"
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
