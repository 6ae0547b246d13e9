// Functional mode: every algorithm moves and reduces real data; results equal the reference
// (sums in double precision; fp32 tolerance for the different summation order).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "test_system.h"
#include "trnsim/collectives/collective.h"
#include "trnsim/collectives/i_collective_algorithm.h"

using namespace trnsim;
using namespace trnsim::collectives;

namespace {

std::vector<std::vector<float>> random_inputs(int n, size_t len, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<std::vector<float>> in(n, std::vector<float>(len));
  for (auto& v : in)
    for (auto& x : v) x = u(g);
  return in;
}

// The op's result by definition.
std::vector<std::vector<double>> reference(Op op, const std::vector<std::vector<float>>& in) {
  const int n = static_cast<int>(in.size());
  const size_t len = in[0].size();
  std::vector<double> sum(len, 0.0);
  for (auto& v : in)
    for (size_t i = 0; i < len; ++i) sum[i] += v[i];
  std::vector<std::vector<double>> out(n);
  for (int r = 0; r < n; ++r) {
    switch (op) {
      case Op::AllReduce: out[r] = sum; break;
      case Op::ReduceScatter: out[r].assign(sum.begin() + r * len / n, sum.begin() + (r + 1) * len / n); break;
      case Op::AllGather:
        for (auto& v : in) out[r].insert(out[r].end(), v.begin(), v.end());
        break;
      case Op::AllToAll:
        for (int j = 0; j < n; ++j) out[r].insert(out[r].end(), in[j].begin() + r * len / n, in[j].begin() + (r + 1) * len / n);
        break;
      default: out[r].assign(in[(r + n - 1) % n].begin(), in[(r + n - 1) % n].end()); break;
    }
  }
  return out;
}

void check(Op op, const std::string& algo, int n, size_t len, const std::string& kind = "switch",
           std::vector<int> dims = {}) {
  auto sys = test::make_system(kind, dims.empty() && kind != "switch" ? std::vector<int>{n} : dims, 1000, n);
  CollectiveOptions o;
  o.op = op;
  o.algorithm = algo;
  CollectiveRunner runner(sys, o);
  auto in = random_inputs(n, len, 1234 + n);
  auto got = runner.run(in);
  auto want = reference(op, in);
  ASSERT_EQ(got.size(), want.size());
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(got[r].size(), want[r].size()) << algo << " rank " << r;
    for (size_t i = 0; i < got[r].size(); ++i)
      ASSERT_NEAR(got[r][i], want[r][i], 1e-5 * n) << name(op) << " " << algo << " n=" << n << " rank " << r << " i=" << i;
  }
}

}  // namespace

TEST(Functional, AllReduceEqualsTheSumForEveryAlgorithm) {
  for (int n : {2, 3, 5, 8, 12, 16})
    for (const char* a : {"ring", "direct", "halving-doubling"}) {
      if (std::string(a) == "halving-doubling" && (n & (n - 1))) continue;
      check(Op::AllReduce, a, n, 1000);  // 1000 does not divide by most n: uneven pieces
      check(Op::AllReduce, a, n, 3);     // fewer elements than ranks: empty pieces
    }
}

TEST(Functional, GatherScatterAndAllToAll) {
  for (int n : {2, 4, 6, 8})
    for (const char* a : {"ring", "direct", "halving-doubling"}) {
      if (std::string(a) == "halving-doubling" && (n & (n - 1))) continue;
      check(Op::AllGather, a, n, 40);
      check(Op::ReduceScatter, a, n, 40 * n);
    }
  for (int n : {2, 5, 8}) {
    check(Op::AllToAll, "direct", n, 16 * n);
    check(Op::Permute, "direct", n, 33);
  }
}

TEST(Functional, HierarchicalAcrossSystems) {
  // 3 systems of 4 chips (one domain each) joined by EFA: 12 ranks, domains of 4.
  auto sys = test::make_system("torus2d", {2, 2}, 1000, 4);
  for (const char* algo : {"hierarchical", "direct"}) {
    CollectiveOptions o;
    o.systems = 3;
    o.algorithm = algo;
    CollectiveRunner runner(sys, o);
    ASSERT_EQ(runner.fabric().ranks(), 12);
    auto in = random_inputs(12, 1001, 7);
    auto got = runner.run(in);
    auto want = reference(Op::AllReduce, in);
    for (int r = 0; r < 12; ++r)
      for (size_t i = 0; i < got[r].size(); ++i) ASSERT_NEAR(got[r][i], want[r][i], 1e-4) << algo;
  }
  CollectiveOptions o;
  o.systems = 4;
  o.algorithm = "hierarchical-hd";
  CollectiveRunner runner(sys, o);
  auto in = random_inputs(16, 500, 9);
  auto got = runner.run(in);
  auto want = reference(Op::AllReduce, in);
  for (int r = 0; r < 16; ++r)
    for (size_t i = 0; i < got[r].size(); ++i) ASSERT_NEAR(got[r][i], want[r][i], 1e-4);
}

TEST(Functional, OnATorusWithTheSnakeRingOrder) {
  check(Op::AllReduce, "ring", 16, 777, "torus2d", {4, 4});
  check(Op::ReduceScatter, "ring", 16, 16 * 5, "torus2d", {4, 4});
  check(Op::AllGather, "ring", 16, 5, "torus2d", {4, 4});
}
