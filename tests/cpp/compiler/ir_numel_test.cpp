// numel: the element count of a shape, checked against overflow (docs/hardening.md, round 7).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "trnsim/common/error.h"
#include "trnsim/compiler/ir.h"

using trnsim::compiler::numel;
using trnsim::compiler::Shape;

TEST(IrNumel, ProductOfTheDims) {
  EXPECT_EQ(numel(Shape{}), 1);
  EXPECT_EQ(numel(Shape{2, 3, 7}), 42);
  EXPECT_EQ(numel(Shape{5, 0, 1LL << 62}), 0);
}

TEST(IrNumel, OverflowIsAShapeErrorNamingTheShape) {
  try {
    numel(Shape{1LL << 32, 1LL << 32});
    FAIL() << "no error";
  } catch (const trnsim::ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("shape [4294967296,4294967296]: shape too large"), std::string::npos) << e.what();
  }
}

// A fuzzed Unsqueeze with 16,384 axes spent 30 s of CPU in shape inference: numel formatted
// the whole shape once per dim (quadratic in the rank). Rank 200,000 formatted per dim would be
// ~10^11 characters; linear, it is microseconds.
TEST(IrNumel, LinearInTheRank) {
  const Shape ones(200000, 1);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(numel(ones), 1);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
}
