// Pass batchnorm-folding: a BatchNormalization after a Conv becomes the Conv's weight and bias
// (closed form checked here; values against onnxruntime in test_vision_lowering.py), in one
// linear pass.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "onnx_model.h"
#include "trnsim/compiler/fold_batchnorm.h"
#include "trnsim/compiler/onnx_import.h"

namespace trnsim::compiler {
namespace {

using testing::OnnxModel;

// Conv (1 -> 2 channels, 1x1, weight w) then `bns` BatchNormalizations of scale s, shift b,
// mean m, var v per channel.
OnnxModel conv_then_bns(int bns) {
  OnnxModel m;
  m.input("x", {1, 1, 2, 2}).floats("w", {2, 1, 1, 1}, {0.5f, -2.0f});
  m.node("Conv", {"x", "w"}, {"c0"}, "conv");
  for (int k = 0; k < bns; ++k) {
    const std::string i = std::to_string(k);
    m.floats("s" + i, {2}, {1.5f, 0.25f}).floats("b" + i, {2}, {0.1f, -0.3f});
    m.floats("m" + i, {2}, {0.2f, 1.0f}).floats("v" + i, {2}, {4.0f, 0.5f});
    m.node("BatchNormalization", {"c" + i, "s" + i, "b" + i, "m" + i, "v" + i}, {"c" + std::to_string(k + 1)}, "bn" + i);
  }
  m.output("c" + std::to_string(bns));
  return m;
}

TEST(FoldBatchnorm, TwoBatchNormsInARowFoldIntoTheConvAsTheClosedForm) {
  Graph g = import_onnx_bytes(conv_then_bns(2).bytes());
  fold_batchnorm(g);
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node& conv = g.nodes[0];
  EXPECT_EQ(conv.op, OpKind::Conv);
  EXPECT_EQ(conv.outputs[0], "c2");
  const std::vector<double> w = g.tensor(conv.inputs[1]).data->values(), b = g.tensor(conv.inputs[2]).data->values();
  const double w0[2] = {0.5, -2.0}, s[2] = {1.5, 0.25}, sh[2] = {0.1, -0.3}, mean[2] = {0.2, 1.0}, var[2] = {4.0, 0.5};
  for (int c = 0; c < 2; ++c) {
    const double k = s[c] / std::sqrt(var[c] + 1e-5);  // y = (x - mean) k + shift, twice
    const double bias1 = sh[c] - mean[c] * k;
    EXPECT_NEAR(w[c], w0[c] * k * k, 1e-6) << c;
    EXPECT_NEAR(b[c], bias1 * k + sh[c] - mean[c] * k, 1e-6) << c;
  }
}

TEST(FoldBatchnorm, ThousandsOfPairsFoldInLinearTime) {
  const int pairs = 4000;
  OnnxModel m;
  m.input("x", {1, 1, 2, 2});
  m.node("Identity", {"x"}, {"y0"}, "in");
  for (int k = 0; k < pairs; ++k) {
    const std::string i = std::to_string(k);
    m.floats("w" + i, {1, 1, 1, 1}, {1.0f}).floats("s" + i, {1}, {1.0f}).floats("b" + i, {1}, {0.0f});
    m.floats("m" + i, {1}, {0.0f}).floats("v" + i, {1}, {1.0f});
    m.node("Conv", {"y" + i, "w" + i}, {"c" + i}, "conv" + i);
    m.node("BatchNormalization", {"c" + i, "s" + i, "b" + i, "m" + i, "v" + i}, {"y" + std::to_string(k + 1)}, "bn" + i);
  }
  m.output("y" + std::to_string(pairs));
  Graph g = import_onnx_bytes(m.bytes());
  const auto t0 = std::chrono::steady_clock::now();
  fold_batchnorm(g);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(g.nodes.size(), static_cast<size_t>(pairs) + 1);  // the Identity and the Convs
  for (size_t i = 1; i < g.nodes.size(); ++i) EXPECT_EQ(g.nodes[i].op, OpKind::Conv) << i;
  EXPECT_EQ(g.nodes.back().outputs[0], "y" + std::to_string(pairs));
  EXPECT_LT(s, 2.0) << "4,000 pairs took " << s << " s: the pass is not linear";  // restart-per-fold: ~20 s
}

}  // namespace
}  // namespace trnsim::compiler
