// 4:16 structured sparsity on a hand example.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "trnsim/common/error.h"
#include "trnsim/numerics/sparsity.h"

namespace trnsim::numerics {
namespace {

TEST(Sparsity, KeepsFourLargestMagnitudesInIndexOrder) {
  // Row 0: |7| at 6, |-5| at 1, then |3| at 2 and |-3| at 10 (tie: both kept, 2 before 10).
  // Row 1: all equal: the first four indices win.
  std::vector<float> x = {0.1f, -5, 3, 0, 2, -2, 7, 1, 0, 0, -3, 0, 0, 0, 0, 0.5f};
  x.insert(x.end(), 16, 1.0f);
  std::vector<float> v(8);
  std::vector<uint8_t> idx(8);
  sparse_pack(x, 2, 16, v, idx);
  EXPECT_EQ(idx, (std::vector<uint8_t>{1, 2, 6, 10, 0, 1, 2, 3}));
  EXPECT_EQ(v, (std::vector<float>{-5, 3, 7, -3, 1, 1, 1, 1}));
  std::vector<float> back(32);
  sparse_unpack(v, idx, 2, 16, back);
  std::vector<float> want(32, 0.0f);
  want[1] = -5; want[2] = 3; want[6] = 7; want[10] = -3;
  for (int i = 16; i < 20; ++i) want[i] = 1;
  EXPECT_EQ(back, want);
}

TEST(Sparsity, NaNRanksBelowEveryNumber) {
  std::vector<float> x(16, 0.0f);
  x[0] = NAN; x[3] = 1; x[5] = -1; x[9] = 0.5f;
  std::vector<float> v(4);
  std::vector<uint8_t> idx(4);
  sparse_pack(x, 1, 16, v, idx);
  EXPECT_EQ(idx, (std::vector<uint8_t>{1, 3, 5, 9}));  // the zero at 1 beats the NaN at 0
}

TEST(Sparsity, BadShapesAndIndicesThrow) {
  std::vector<float> x(20), v(4), out(16);
  std::vector<uint8_t> idx(4);
  EXPECT_THROW(sparse_pack(x, 1, 20, v, idx), ShapeError);  // 20 not a multiple of 16
  std::vector<uint8_t> bad = {0, 2, 2, 5};                     // not increasing
  EXPECT_THROW(sparse_unpack(v, bad, 1, 16, out), ShapeError);
  std::vector<uint8_t> big = {0, 2, 3, 16};
  EXPECT_THROW(sparse_unpack(v, big, 1, 16, out), ShapeError);
  EXPECT_THROW(sparse_pack(std::vector<float>(16), 1, 16, v, idx, SparsePattern{5, 4}),
               ShapeError);
}

}  // namespace
}  // namespace trnsim::numerics
