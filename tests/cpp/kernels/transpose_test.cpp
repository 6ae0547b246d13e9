// transpose is data movement: exact, by both methods, for square, wide, tall and partial-tile
// shapes; "auto" picks the method the timing model finds faster.
#include "library_kernel_check.h"
#include "trnsim/kernels/transpose.h"

namespace trnsim::kernels {
namespace {
using testing::run_checked;

TEST(TransposeKernel, TensorEngineExact) {
  run_checked("transpose", "trn2", {{"rows", "128"}, {"cols", "128"}, {"method", "tensor"}}, "fp32");
  run_checked("transpose", "trn2", {{"rows", "700"}, {"cols", "300"}, {"method", "tensor"}}, "bf16");
  run_checked("transpose", "trn1", {{"rows", "130"}, {"cols", "1100"}, {"method", "tensor"}}, "fp32");
}

TEST(TransposeKernel, DmaExact) {
  run_checked("transpose", "trn2", {{"rows", "300"}, {"cols", "200"}, {"method", "dma"}}, "bf16");
  run_checked("transpose", "trn2", {{"rows", "5"}, {"cols", "3"}, {"method", "dma"}}, "fp32");
}

TEST(TransposeKernel, AutoPicksTheFasterMethod) {
  auto chip = hw::load_chip("trn2");
  core::RunOptions timing{.mode = core::Mode::Timing, .record_instructions = false};
  for (auto [r, c] : {std::pair{16, 16}, std::pair{256, 256}}) {
    auto t = core::run(transpose_program(chip, r, c, DType::BF16, "tensor"), chip, {}, timing).total;
    auto d = core::run(transpose_program(chip, r, c, DType::BF16, "dma"), chip, {}, timing).total;
    auto a = core::run(transpose_program(chip, r, c, DType::BF16, "auto"), chip, {}, timing).total;
    EXPECT_EQ(a, std::min(t, d)) << r << "x" << c;
  }
}

TEST(TransposeKernel, UnknownMethodIsAnError) {
  auto chip = hw::load_chip("trn2");
  EXPECT_THROW(transpose_program(chip, 8, 8, DType::F32, "magic"), UnsupportedError);
}

}  // namespace
}  // namespace trnsim::kernels
