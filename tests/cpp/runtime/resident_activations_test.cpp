// Activations resident in SBUF between nodes (compiler/sbuf_residency.h): an encoder's
// post-attention block, out-projection + LayerNorm, FFN-in + Relu, FFN-out + residual +
// LayerNorm, at two row tiles. References: a plain C++ loop for the values, closed forms for
// the HBM bytes (every activation between the matmuls counted zero times with residency, and
// as a store plus a load per reader without it).
#include <gtest/gtest.h>

#include <variant>

#include "one_node_model.h"
#include "trnsim/compiler/sbuf_residency.h"

namespace trnsim::runtime {
namespace {

using testing::OnnxModel;
using testing::values;

constexpr int M = 256, D = 256, F = 1024;

struct Block {
  std::vector<float> wo = values(size_t(D) * D, 51), w1 = values(size_t(D) * F, 52), w2 = values(size_t(F) * D, 53);
  std::vector<float> bo = values(D, 54), g1 = values(D, 55), be1 = values(D, 56), b1 = values(F, 57), b2 = values(D, 58),
                     g2 = values(D, 59), be2 = values(D, 60);
  OnnxModel model() const {
    OnnxModel om;
    om.input("x", {M, D});
    om.floats("wo", {D, D}, wo).floats("bo", {D}, bo).floats("g1", {D}, g1).floats("be1", {D}, be1);
    om.floats("w1", {D, F}, w1).floats("b1", {F}, b1).floats("w2", {F, D}, w2).floats("b2", {D}, b2);
    om.floats("g2", {D}, g2).floats("be2", {D}, be2);
    om.node("MatMul", {"x", "wo"}, {"o"});
    om.node("Add", {"o", "bo"}, {"ob"});
    om.node("Add", {"ob", "x"}, {"or"});
    om.node("LayerNormalization", {"or", "g1", "be1"}, {"y1"});
    om.node("MatMul", {"y1", "w1"}, {"h"});
    om.node("Add", {"h", "b1"}, {"hb"});
    om.node("Relu", {"hb"}, {"g"});
    om.node("MatMul", {"g", "w2"}, {"f"});
    om.node("Add", {"f", "b2"}, {"fb"});
    om.node("Add", {"fb", "y1"}, {"fr"});
    om.node("LayerNormalization", {"fr", "g2", "be2"}, {"y2"});
    om.output("y2");
    return om;
  }
};

// LayerNorm over a row (eps 1e-5) with scale and shift.
std::vector<double> layernorm(const std::vector<double>& h, const std::vector<float>& g, const std::vector<float>& b) {
  const size_t n = h.size();
  double mean = 0, var = 0;
  for (double v : h) mean += v / double(n);
  for (double v : h) var += (v - mean) * (v - mean) / double(n);
  std::vector<double> y(n);
  for (size_t c = 0; c < n; ++c) y[c] = (h[c] - mean) / std::sqrt(var + 1e-5) * g[c] + b[c];
  return y;
}

// Row r of y2, with the matmul operands rounded to bf16 (the policy).
std::vector<double> want_row(const Block& b, const std::vector<float>& x, int r) {
  using testing::bf16;
  std::vector<double> h(D), hid(F), f(D);
  for (int c = 0; c < D; ++c) {
    double s = 0;
    for (int i = 0; i < D; ++i) s += bf16(x[size_t(r) * D + i]) * bf16(b.wo[size_t(i) * D + c]);
    h[c] = double(float(s)) + b.bo[c] + x[size_t(r) * D + c];
  }
  const auto y1 = layernorm(h, b.g1, b.be1);
  for (int c = 0; c < F; ++c) {
    double s = 0;
    for (int i = 0; i < D; ++i) s += bf16(float(y1[i])) * bf16(b.w1[size_t(i) * F + c]);
    hid[c] = std::max(0.0, s + b.b1[c]);
  }
  for (int c = 0; c < D; ++c) {
    double s = 0;
    for (int i = 0; i < F; ++i) s += bf16(float(hid[i])) * bf16(b.w2[size_t(i) * D + c]);
    f[c] = s + b.b2[c] + y1[c];
  }
  return layernorm(f, b.g2, b.be2);
}

RunOutput run(const Block& b, const std::vector<float>& x, bool resident, core::Mode mode = core::Mode::Functional) {
  compiler::CompileOptions o;
  o.cores = 1;
  o.policy = compiler::DTypePolicy::BF16;
  o.resident_activations = resident;
  o.timing_only = mode == core::Mode::Timing;
  const auto chip = hw::load_chip("trn1");
  auto cm = compiler::compile(compiler::import_onnx_bytes(b.model().bytes()), chip, o);
  return LoadedModel(cm, chip).run({{"x", x}}, mode);
}

// Closed form of the block's HBM bytes: x twice (A and residual), the bf16 weights once, the
// seven parameter rows once (six of D, one of F), y2 once. Without residency add y1 (stored, read as A and as the
// residual, fp32) and the Relu output (stored and read as A, bf16 by operand-storage).
TEST(ResidentActivations, EncoderBlockMovesItsActivationsThroughHbmZeroTimes) {
  const Block b;
  const auto x = values(size_t(M) * D, 61);
  const double fixed = 4.0 * 2 * M * D + 2.0 * (double(D) * D + 2.0 * D * F) + 4.0 * (6.0 * D + F) + 4.0 * M * D;
  const double activations = 4.0 * 3 * M * D + 2.0 * 2 * M * F;
  const auto on = run(b, x, true), off = run(b, x, false);
  EXPECT_DOUBLE_EQ(on.report.hbm_bytes, fixed);
  EXPECT_DOUBLE_EQ(off.report.hbm_bytes, fixed + activations);
  EXPECT_LT(on.report.time_s, off.report.time_s);
  // Values: the loop, every 13th row (both row tiles).
  const auto& got = on.outputs.at("y2");
  for (int r = 0; r < M; r += 13) {
    const auto want = want_row(b, x, r);
    for (int c = 0; c < D; ++c) ASSERT_NEAR(got[size_t(r) * D + c], want[c], 5e-3 + 5e-3 * std::fabs(want[c])) << r << "," << c;
  }
  // The same inputs give the same bits, run to run.
  EXPECT_EQ(run(b, x, true).outputs.at("y2"), got);
}

// Each resident tensor sits above the highest SBUF byte of every kernel of its span, so that no
// kernel's own tiles (nor its plan) change; the producer of each is the MatMul before its readers.
TEST(ResidentActivations, ResidentTensorsSitAboveEveryKernelOfTheirSpan) {
  const Block b;
  compiler::CompileOptions o;
  o.cores = 1;
  o.policy = compiler::DTypePolicy::BF16;
  o.timing_only = true;
  const auto chip = hw::load_chip("trn1");
  auto cm = compiler::compile(compiler::import_onnx_bytes(b.model().bytes()), chip, o);
  std::map<std::string, const compiler::Segment*> seg;
  for (const auto& s : cm.segments) seg[s.node] = &s;
  int resident_nodes = 0;
  for (const auto& n : cm.graph.nodes)
    for (const auto& [key, value] : n.attrs) {
      if (key.rfind("resident:", 0) != 0) continue;
      const auto& v = std::get<std::vector<int64_t>>(value);
      ++resident_nodes;
      EXPECT_LE(seg.at(n.name)->sbuf_peak_bytes, v[0]) << n.name << " " << key;
      EXPECT_LE(v[0] + v[1], int64_t(chip.core.sbuf.bytes_per_partition.value()));
      EXPECT_EQ(v[3], 0) << key << ": no reader needs it in HBM";
    }
  EXPECT_GE(resident_nodes, 4);  // y1 over three nodes, the Relu output over two
}

}  // namespace
}  // namespace trnsim::runtime
