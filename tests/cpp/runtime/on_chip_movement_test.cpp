// Data movement done on chip instead of by DMA: a LayerNorm's scale and shift rows are read
// from HBM once (copied across partitions by GpSimd), and a large transpose of the last two
// axes goes through TensorE. References: plain C++ loops for values, closed forms for bytes.
#include <gtest/gtest.h>

#include <variant>

#include "one_node_model.h"

namespace trnsim::runtime {
namespace {

using testing::OnnxModel;
using testing::values;

// ViT's pre-attention LayerNorm (197 tokens x 768): HBM bytes are x in, y out and gamma and
// beta once each; read per partition they were 128 x 768 x 4 bytes each.
TEST(OnChipMovement, LayerNormParametersAreReadOnce) {
  const int R = 197, C = 768;
  OnnxModel m;
  m.input("x", {R, C});
  m.floats("g", {C}, values(C, 51)).floats("b", {C}, values(C, 52));
  m.node("LayerNormalization", {"x", "g", "b"}, {"y"});
  m.output("y");
  auto x = values(R * C, 53), g = values(C, 51), b = values(C, 52);
  const auto out = testing::run_one_core(m, hw::load_chip("inf2"), {{"x", x}});
  const auto& got = out.outputs.at("y");
  for (int r = 0; r < R; ++r) {
    double mean = 0, var = 0;
    for (int c = 0; c < C; ++c) mean += double(x[size_t(r) * C + c]) / C;
    for (int c = 0; c < C; ++c) var += (x[size_t(r) * C + c] - mean) * (x[size_t(r) * C + c] - mean) / C;
    for (int c = 0; c < C; ++c) {
      const double want = (x[size_t(r) * C + c] - mean) / std::sqrt(var + 1e-5) * g[c] + b[c];
      ASSERT_NEAR(got[size_t(r) * C + c], want, 1e-4 + 1e-4 * std::fabs(want)) << r << "," << c;
    }
  }
  EXPECT_DOUBLE_EQ(out.report.hbm_bytes, 4.0 * (2.0 * R * C + 2.0 * C));
}

// ViT's patch tokens: [B, 768, 196] -> [B, 196, 768]. Exact values; TensorE does the work
// (its transposes count as TensorE FLOPs) and no DMA copies HBM to HBM; the program is
// several times faster than a transposing DMA (every element its own 4-byte descriptor run).
TEST(OnChipMovement, LargeTransposeOfTheLastTwoAxesRunsOnTensorE) {
  const int B = 2, R = 768, C = 196;
  OnnxModel m;
  m.input("x", {B, R, C});
  OnnxModel::attr(m.node("Transpose", {"x"}, {"y"}), "perm", std::vector<int64_t>{0, 2, 1});
  m.output("y");
  auto x = values(B * R * C, 54);
  const hw::ChipSpec chip = hw::load_chip("inf2");
  auto cm = testing::compile_one_core(m, chip);
  const auto out = LoadedModel(cm, chip).run({{"x", x}}, core::Mode::Functional);
  const auto& got = out.outputs.at("y");
  for (int b = 0; b < B; ++b)
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c) ASSERT_EQ(got[(size_t(b) * C + c) * R + r], x[(size_t(b) * R + r) * C + c]);
  EXPECT_GT(out.report.tensor_flops, 0.0);
  for (const auto& seg : cm.segments)
    for (const auto& core : seg.program.cores)
      for (const auto& q : core.dma_queues)
        for (const auto& ins : q)
          if (const auto* d = std::get_if<isa::Dma>(&ins.op)) EXPECT_FALSE(d->src.space == isa::Space::HBM && d->dst.space == isa::Space::HBM);
  // A transposing DMA of B x R x C fp32 at its element-run efficiency (core::dma_efficiency
  // of 4 bytes) over all 16 engines, fixed costs ignored: a lower bound the TensorE path beats.
  const double dma_s = 4.0 * B * R * C / (16 * chip.core.dma.bandwidth_per_engine.value() * 1e9 * 0.016);
  EXPECT_LT(out.report.time_s, dma_s / 3);
}

}  // namespace
}  // namespace trnsim::runtime
