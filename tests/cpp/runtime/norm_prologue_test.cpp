// A pre-norm LayerNorm as its MatMul readers' prologue (compiler/fuse_norm_prologue.h):
// x -> MatMul + x (the stream s) -> LayerNorm -> MatMul + bias -> MatMul + s, two row tiles.
// Reference: the same block compiled without the pass (the LayerNorm kernel), whose values
// trnsim's tests check against onnxruntime (tests/python/test_norm_prologue.py). The prologue
// runs the library LayerNorm's instructions on the same rows, so the values are the same bits;
// the bytes differ by exactly the LayerNorm kernel's traffic.
#include <gtest/gtest.h>

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

TEST(NormPrologue, SameBitsAsTheLayerNormKernelWithoutItsHbmRoundTrip) {
  const auto x = values(size_t(M) * D, 77);
  size_t k_on = 0, k_off = 0;
  const auto on = run(x, true, &k_on), off = run(x, false, &k_off);
  EXPECT_EQ(k_on + 1, k_off);  // the LayerNorm kernel is gone
  EXPECT_EQ(on.outputs.at("y"), off.outputs.at("y"));
  // Without the prologue: s stored and read by the LayerNorm, n (fp32) stored and read as A.
  EXPECT_DOUBLE_EQ(off.report.hbm_bytes - on.report.hbm_bytes, 4.0 * 4 * M * D);
  EXPECT_LT(on.report.time_s, off.report.time_s);
  EXPECT_EQ(run(x, true).outputs.at("y"), on.outputs.at("y"));  // run to run
}

}  // namespace
}  // namespace trnsim::runtime
