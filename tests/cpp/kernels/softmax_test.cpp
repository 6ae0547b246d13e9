// softmax against the double reference (fp32 1e-5 relative, bf16 1e-2), through one-chunk
// and multi-chunk (online max/sum) paths, partial row tiles, and the rows-sum-to-one property.
#include "library_kernel_check.h"

namespace trnsim::kernels {
namespace {
using testing::run_checked;

TEST(SoftmaxKernel, Fp32OneChunkPartialRowTiles) { run_checked("softmax", "trn2", {{"rows", "300"}, {"cols", "700"}}, "fp32"); }
TEST(SoftmaxKernel, Bf16OnTrn1) { run_checked("softmax", "trn1", {{"rows", "128"}, {"cols", "1024"}}, "bf16"); }

TEST(SoftmaxKernel, MultiChunkOnlineMatchesReference) {
  // Inputs growing along the row make the running max change in every chunk.
  const int64_t rows = 130, cols = 2500;
  std::vector<float> x(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) x[r * cols + c] = static_cast<float>(0.004 * c + 0.01 * ((r * 7 + c * 13) % 17));
  run_checked("softmax", "trn2", {{"rows", "130"}, {"cols", "2500"}, {"chunk", "512"}}, "fp32", {{"x", x}});
  run_checked("softmax", "trn2", {{"rows", "64"}, {"cols", "1500"}, {"chunk", "512"}}, "bf16");
}

TEST(SoftmaxKernel, RowsSumToOne) {
  auto r = run_checked("softmax", "trn2", {{"rows", "200"}, {"cols", "333"}}, "fp32");
  const auto& y = r.result.outputs.at("y");
  for (int64_t row = 0; row < 200; ++row) {
    double s = 0;
    for (int64_t c = 0; c < 333; ++c) s += y[row * 333 + c];
    EXPECT_NEAR(s, 1.0, 1e-5) << row;
  }
}

TEST(SoftmaxKernel, LargeInputsDoNotOverflow) {
  std::vector<float> x(128 * 256);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 80.0f + static_cast<float>(i % 256) * 0.1f;  // exp(105) overflows fp32
  run_checked("softmax", "trn2", {{"rows", "128"}, {"cols", "256"}}, "fp32", {{"x", x}});
}

}  // namespace
}  // namespace trnsim::kernels
