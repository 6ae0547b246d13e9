// A pre-norm LayerNorm as its MatMul readers' prologue (compiler/fuse_norm_prologue.h):
// x -> MatMul + x (the stream s) -> LayerNorm -> MatMul + bias -> MatMul + s, two row tiles.
// Reference: the same block compiled without the pass (the LayerNorm kernel), whose values
// trnsim's tests check against onnxruntime (tests/python/test_norm_prologue.py). The values
// differ only by where the bf16 roundings fall (the scale is folded into the weight before it
// is rounded); the bytes differ by exactly the LayerNorm kernel's traffic.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "one_node_model.h"

namespace trnsim::runtime {
namespace {

using testing::OnnxModel;
using testing::values;

constexpr int M = 256, D = 256, F = 512;

OnnxModel pre_norm_block() {
  OnnxModel om;
  om.input("x", {M, D});
  om.floats("w0", {D, D}, values(size_t(D) * D, 71)).floats("g", {D}, values(D, 72)).floats("b", {D}, values(D, 73));
  om.floats("w1", {D, F}, values(size_t(D) * F, 74)).floats("c1", {F}, values(F, 75)).floats("w2", {F, D}, values(size_t(F) * D, 76));
  om.node("MatMul", {"x", "w0"}, {"m0"});
  om.node("Add", {"m0", "x"}, {"s"});
  om.node("LayerNormalization", {"s", "g", "b"}, {"n"});
  om.node("MatMul", {"n", "w1"}, {"m1"});
  om.node("Add", {"m1", "c1"}, {"y1"});
  om.node("MatMul", {"y1", "w2"}, {"m2"});
  om.node("Add", {"m2", "s"}, {"y"});
  om.output("y");
  return om;
}

RunOutput run(const std::vector<float>& x, bool prologue, size_t* kernels = nullptr) {
  compiler::CompileOptions o;
  o.cores = 1;
  o.policy = compiler::DTypePolicy::BF16;
  o.norm_prologue = prologue;
  const auto chip = hw::load_chip("trn1");
  auto cm = compiler::compile(compiler::import_onnx_bytes(pre_norm_block().bytes()), chip, o);
  if (kernels) *kernels = cm.segments.size();
  return LoadedModel(cm, chip).run({{"x", x}}, core::Mode::Functional);
}

TEST(NormPrologue, TheLayerNormKernelsValuesWithoutItsHbmRoundTrip) {
  const auto x = values(size_t(M) * D, 77);
  size_t k_on = 0, k_off = 0;
  const auto on = run(x, true, &k_on), off = run(x, false, &k_off);
  EXPECT_EQ(k_on + 1, k_off);  // the LayerNorm kernel is gone
  const auto &got = on.outputs.at("y"), &want = off.outputs.at("y");
  float scale = 0;
  for (float v : want) scale = std::max(scale, std::fabs(v));
  // bf16 operands: a few ulps of 2^-8 of the largest value.
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-2 * scale) << i;
  // Without the prologue: s stored and read by the LayerNorm, n (fp32) stored and read as A,
  // and the LayerNorm's scale and shift rows loaded.
  EXPECT_DOUBLE_EQ(off.report.hbm_bytes - on.report.hbm_bytes, 4.0 * 4 * M * D + 4.0 * 2 * D);
  EXPECT_LT(on.report.time_s, off.report.time_s);
  EXPECT_EQ(run(x, true).outputs.at("y"), got);  // run to run
}

}  // namespace
}  // namespace trnsim::runtime
