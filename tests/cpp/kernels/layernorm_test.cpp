// layernorm and rmsnorm against the double reference (fp32 1e-5, bf16 2e-2 abs + 1e-2 rel),
// single- and multi-chunk, plus the defining property (zero mean, unit variance).
#include "library_kernel_check.h"
#include "trnsim/kernels/rmsnorm.h"

namespace trnsim::kernels {
namespace {
using testing::run_checked;

TEST(LayernormKernel, Fp32AndBf16) {
  run_checked("layernorm", "trn2", {{"rows", "200"}, {"cols", "768"}}, "fp32");
  run_checked("layernorm", "trn1", {{"rows", "128"}, {"cols", "1000"}}, "bf16");
}

TEST(LayernormKernel, MultiChunk) {
  run_checked("layernorm", "trn2", {{"rows", "70"}, {"cols", "2100"}, {"chunk", "512"}}, "fp32");
}

// Chunks that are not a multiple of bn_stats' 512 columns: each (chunk, group) has its own
// statistics slot (they shared one, and --chunk 100 was wrong by 0.85).
TEST(LayernormKernel, ChunksNotAMultipleOf512AreExact) {
  for (const char* chunk : {"100", "700", "1"})
    run_checked("layernorm", "trn2", {{"rows", "3"}, {"cols", "1100"}, {"chunk", chunk}}, "fp32");
}

TEST(LayernormKernel, NormalisesEachRow) {
  const int64_t rows = 64, cols = 512;
  Tensors in{{"gamma", std::vector<float>(cols, 1.0f)}, {"beta", std::vector<float>(cols, 0.0f)}};
  auto r = run_checked("layernorm", "trn2", {{"rows", "64"}, {"cols", "512"}}, "fp32", in);
  const auto& y = r.result.outputs.at("y");
  for (int64_t row = 0; row < rows; ++row) {
    double m = 0, v = 0;
    for (int64_t c = 0; c < cols; ++c) m += y[row * cols + c];
    m /= cols;
    for (int64_t c = 0; c < cols; ++c) v += (y[row * cols + c] - m) * (y[row * cols + c] - m);
    EXPECT_NEAR(m, 0.0, 1e-5);
    EXPECT_NEAR(v / cols, 1.0, 1e-3);  // var/(var + eps) with var ~ 1/3
  }
}

TEST(RmsnormKernel, Fp32Bf16AndChunks) {
  run_checked("rmsnorm", "trn2", {{"rows", "130"}, {"cols", "1024"}}, "fp32");
  run_checked("rmsnorm", "trn1", {{"rows", "100"}, {"cols", "4096"}}, "bf16");
  run_checked("rmsnorm", "trn2", {{"rows", "40"}, {"cols", "3000"}, {"chunk", "1024"}}, "fp32");
}

TEST(NormKernels, GammaOfTheWrongLengthIsAShapeError) {
  hw::ChipSpec chip = hw::load_chip("trn2");
  KernelBuilder kb(chip);
  auto x = kb.hbm_input("x", {4, 8}, DType::F32);
  auto g = kb.hbm_input("gamma", {7}, DType::F32);
  auto y = kb.hbm_output("y", {4, 8}, DType::F32);
  EXPECT_THROW(rmsnorm(kb, x, g, y), ShapeError);
}

}  // namespace
}  // namespace trnsim::kernels
