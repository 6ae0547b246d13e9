// Whole-program scheduling (runtime/program_link.h) and GELU recognition (fuse_gelu.h): the
// linked program computes bit for bit what running the kernels one by one computes, is never
// slower, really overlaps (weights of the next node load under the current one), and the per-op
// shares still add up to the latency; a GELU written out as Div/Erf/Add/Mul/Mul becomes one Gelu
// on the matmul evacuation and matches the closed form, a chain that is not GELU stays as it is.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "../compiler/onnx_model.h"
#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/loaded_model.h"
#include "trnsim/runtime/random_inputs.h"

namespace trnsim::runtime {
namespace {

using testing::OnnxModel;

compiler::CompiledModel compile(const OnnxModel& m, const hw::ChipSpec& chip, compiler::DTypePolicy p) {
  compiler::CompileOptions o;
  o.policy = p;
  o.cores = 1;
  return compiler::compile(compiler::import_onnx_bytes(m.bytes()), chip, o);
}

// x[256, 256] through three weight matmuls and a layernorm.
OnnxModel chain() {
  OnnxModel m;
  m.input("x", {256, 256});
  for (int i = 0; i < 3; ++i) m.floats("w" + std::to_string(i), {256, 256}, testing::values(256 * 256, 10 + i));
  m.floats("g", {256}, testing::values(256, 7)).floats("b", {256}, testing::values(256, 8));
  m.node("MatMul", {"x", "w0"}, {"h0"}, "mm0");
  m.node("MatMul", {"h0", "w1"}, {"h1"}, "mm1");
  m.node("LayerNormalization", {"h1", "g", "b"}, {"n"}, "ln");
  m.node("MatMul", {"n", "w2"}, {"y"}, "mm2");
  m.output("y");
  return m;
}

TEST(Overlap, LinkedProgramIsExactNeverSlowerAndOverlaps) {
  const hw::ChipSpec chip = hw::load_chip("trn1");
  const auto cm = compile(chain(), chip, compiler::DTypePolicy::BF16);
  const auto in = random_inputs(cm, 3);
  LoadedModel linked(cm, chip), serial(cm, chip, /*overlap=*/false);
  const auto a = linked.run(in, core::Mode::Functional), b = serial.run(in, core::Mode::Functional);
  const auto& ya = a.outputs.at("y");
  const auto& yb = b.outputs.at("y");
  ASSERT_EQ(ya.size(), yb.size());
  for (size_t i = 0; i < ya.size(); ++i) ASSERT_EQ(std::bit_cast<uint32_t>(ya[i]), std::bit_cast<uint32_t>(yb[i])) << i;
  EXPECT_GT(a.report.prefetched_loads, 0u);
  EXPECT_EQ(b.report.prefetched_loads, 0u);
  EXPECT_LT(a.report.time_s, b.report.time_s);
  EXPECT_GT(a.report.overlap_s, 0.0);
  double sum = 0, overlap = 0;
  for (const auto& o : a.report.ops) {
    sum += o.time_s;
    overlap += o.overlap_s;
    EXPECT_LE(o.start_s, o.end_s);
  }
  EXPECT_NEAR(sum, a.report.time_s, 1e-12);
  EXPECT_NEAR(overlap, a.report.overlap_s, 1e-12);
  EXPECT_DOUBLE_EQ(linked.run({}, core::Mode::Timing).report.time_s, a.report.time_s);  // same program
}

// y = MatMul(x, w) + bias, then the chain `tail` spells f(h) with scalar constants.
OnnxModel gelu_model(bool real_gelu) {
  OnnxModel m;
  const int64_t M = 64, K = 32, N = 96;
  m.input("x", {M, K}).floats("w", {K, N}, testing::values(K * N, 3)).floats("bias", {N}, testing::values(N, 4));
  m.floats("sqrt2", {}, {1.41421356f}).floats("one", {}, {1.0f}).floats("half", {}, {real_gelu ? 0.5f : 0.25f});
  m.node("MatMul", {"x", "w"}, {"mm"}, "mm");
  m.node("Add", {"mm", "bias"}, {"h"}, "bias_add");
  m.node("Div", {"h", "sqrt2"}, {"d"}, "div");
  m.node("Erf", {"d"}, {"e"}, "erf");
  m.node("Add", {"e", "one"}, {"e1"}, "add1");
  m.node("Mul", {"h", "e1"}, {"p"}, "mul");
  m.node("Mul", {"p", "half"}, {"y"}, "mul_half");
  m.output("y");
  return m;
}

bool has_op(const compiler::CompiledModel& cm, const std::string& op) {
  for (const auto& s : cm.segments)
    if (s.op == op) return true;
  return false;
}

// The ops of the graph's nodes and of the chains fused into them (elementwise-fusion).
bool computes_op(const compiler::CompiledModel& cm, compiler::OpKind op) {
  for (const auto& n : cm.graph.nodes) {
    if (n.op == op) return true;
    for (const auto& e : n.epilogue)
      if (e.op == op) return true;
  }
  return false;
}

TEST(GeluFusion, ErfChainBecomesOneGeluOnTheMatmulAndMatchesTheClosedForm) {
  const hw::ChipSpec chip = hw::load_chip("trn2");
  const auto cm = compile(gelu_model(true), chip, compiler::DTypePolicy::FP32);
  ASSERT_EQ(cm.segments.size(), 1u);  // MatMul + bias + Gelu
  EXPECT_EQ(cm.segments[0].op, "MatMul");
  const auto& fused = cm.segments[0].fused;
  EXPECT_NE(std::find(fused.begin(), fused.end(), "mul_half"), fused.end());
  const auto in = random_inputs(cm, 5);
  const auto y = LoadedModel(cm, chip).run(in, core::Mode::Functional).outputs.at("y");
  const auto& x = in.at("x");
  const auto w = testing::values(32 * 96, 3), bias = testing::values(96, 4);
  for (int64_t i = 0; i < 64; ++i)
    for (int64_t j = 0; j < 96; ++j) {
      double h = bias[static_cast<size_t>(j)];
      for (int64_t k = 0; k < 32; ++k) h += double(x[static_cast<size_t>(i * 32 + k)]) * w[static_cast<size_t>(k * 96 + j)];
      const double want = 0.5 * h * (1 + std::erf(h / std::sqrt(2.0)));
      ASSERT_NEAR(y[static_cast<size_t>(i * 96 + j)], want, 1e-4 * std::max(1.0, std::abs(want))) << i << "," << j;
    }
}

TEST(GeluFusion, AChainThatIsNotGeluStaysAsWritten) {
  const hw::ChipSpec chip = hw::load_chip("trn2");
  const auto cm = compile(gelu_model(false), chip, compiler::DTypePolicy::FP32);  // 0.25 x (1 + erf)
  EXPECT_TRUE(computes_op(cm, compiler::OpKind::Erf));  // kept, in a fused element-wise chain
  EXPECT_FALSE(computes_op(cm, compiler::OpKind::Gelu));
}

}  // namespace
}  // namespace trnsim::runtime
