// Max-min fair sharing against closed forms (Bertsekas & Gallager, Data Networks, 6.5.2).
#include <gtest/gtest.h>

#include <cmath>

#include "trnsim/fabric/max_min.h"

using trnsim::fabric::MaxMinSolver;

namespace {
std::vector<double> solve(std::vector<double> cap, std::vector<std::vector<int>> paths) {
  std::vector<int64_t> off{0};
  std::vector<int> flat;
  for (auto& p : paths) {
    flat.insert(flat.end(), p.begin(), p.end());
    off.push_back(static_cast<int64_t>(flat.size()));
  }
  std::vector<double> rate;
  MaxMinSolver().solve(cap, off, flat, rate);
  return rate;
}
}  // namespace

TEST(MaxMin, TwoFlowsOnOneLinkEachGetHalf) {
  auto r = solve({100.0}, {{0}, {0}});
  EXPECT_DOUBLE_EQ(r[0], 50.0);
  EXPECT_DOUBLE_EQ(r[1], 50.0);
}

TEST(MaxMin, NFlowsOnOneLinkEachGetOneNth) {
  std::vector<std::vector<int>> paths(7, {0});
  for (double x : solve({70.0}, paths)) EXPECT_DOUBLE_EQ(x, 10.0);
}

TEST(MaxMin, ABottleneckedFlowLeavesItsShareToTheOthers) {
  // Link 0 (10) carries flows 0 and 1; flow 1 also crosses link 1 (2): flow 1 = 2, flow 0 = 8.
  auto r = solve({10.0, 2.0}, {{0}, {0, 1}});
  EXPECT_DOUBLE_EQ(r[1], 2.0);
  EXPECT_DOUBLE_EQ(r[0], 8.0);
}

TEST(MaxMin, ParkingLot) {
  // Two links of capacity 1 in a line; one long flow over both, one short flow on each:
  // every flow gets 1/2 (the textbook example: max-min, not max-throughput, which gives 0/1/1).
  auto r = solve({1.0, 1.0}, {{0, 1}, {0}, {1}});
  for (double x : r) EXPECT_DOUBLE_EQ(x, 0.5);
}

TEST(MaxMin, ThreeLevels) {
  // Link A (3) holds f0,f1,f2; link B (1) holds f1,f2; link C (10) holds f0,f3.
  // B fills first: f1 = f2 = 0.5; A has 2 left for f0 -> 2; C has 8 left for f3 -> 8.
  auto r = solve({3.0, 1.0, 10.0}, {{0, 2}, {0, 1}, {0, 1}, {2}});
  EXPECT_DOUBLE_EQ(r[1], 0.5);
  EXPECT_DOUBLE_EQ(r[2], 0.5);
  EXPECT_DOUBLE_EQ(r[0], 2.0);
  EXPECT_DOUBLE_EQ(r[3], 8.0);
}

TEST(MaxMin, AFlowCrossingNothingIsUnlimited) {
  auto r = solve({1.0}, {{}, {0}});
  EXPECT_TRUE(std::isinf(r[0]));
  EXPECT_DOUBLE_EQ(r[1], 1.0);
}
