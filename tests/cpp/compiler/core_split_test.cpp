// The core-split pass: nodes divided among the chip's NeuronCores. Checks the `cores` the pass
// records (in the IR dump), that splits which keep every reduction whole give bit-identical
// results to one core (matmul by rows and by columns, softmax and layernorm by rows, attention
// by heads, element-wise ops by column ranges) and match a double reference, that a large matmul on trn2 gets several times
// faster on 8 cores, and that an impossible --cores is a ConfigError.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "onnx_model.h"
#include "run_compiled.h"
#include "trnsim/common/error.h"
#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/hw/spec_loader.h"

namespace trnsim::compiler {
namespace {

using trnsim::testing::OnnxModel;
using trnsim::testing::values;

const hw::ChipSpec& trn2() {
  static const hw::ChipSpec chip = hw::load_chip("trn2");
  return chip;
}

CompiledModel compiled(const OnnxModel& m, int cores, DTypePolicy p = DTypePolicy::FP32) {
  CompileOptions o;
  o.policy = p;
  o.cores = cores;
  o.keep_ir = true;
  return compile(import_onnx_bytes(m.bytes()), trn2(), o);
}

OnnxModel matmul_model(int64_t m, int64_t k, int64_t n) {
  OnnxModel g;
  g.input("x", {m, k}).floats("w", {k, n}, values(static_cast<size_t>(k * n), 7));
  g.floats("b", {n}, values(static_cast<size_t>(n), 8));
  g.node("MatMul", {"x", "w"}, {"h"}, "mm");
  g.node("Add", {"h", "b"}, {"y"}, "bias");
  g.output("y");
  return g;
}

int cores_of(const CompiledModel& cm, const std::string& node) {
  for (const auto& n : cm.graph.nodes)
    if (n.name == node) return static_cast<int>(n.i("cores", 1));
  return -1;
}

int program_cores(const Segment& s) {
  int c = 0;
  for (const auto& cp : s.program.cores) c += cp.instruction_count() > 0;
  return c;
}

void expect_bit_identical(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << "element " << i;
}

TEST(CoreSplit, MatmulSplitsByRowsAndColumnsBitIdentically) {
  // 256 rows: 2 row tiles, each split in 4 column ranges of 256 (>= kMinColsPerCore): 8
  // cores, whose stores write interleaved column ranges of one output.
  const int64_t M = 256, K = 320, N = 1024;
  auto one = compiled(matmul_model(M, K, N), 1);
  auto eight = compiled(matmul_model(M, K, N), 8);
  EXPECT_EQ(cores_of(one, "mm"), 1);
  EXPECT_EQ(cores_of(eight, "mm"), 8);
  EXPECT_NE(eight.dump_ir().find("=== after pass 'core-split'"), std::string::npos);
  EXPECT_NE(eight.dump_ir().find("cores=8"), std::string::npos);
  ASSERT_EQ(eight.segments.size(), 1u);
  EXPECT_EQ(program_cores(eight.segments[0]), 8);
  std::map<std::string, std::vector<float>> in{{"x", values(static_cast<size_t>(M * K), 9)}};
  auto r1 = testing::run_compiled(one, trn2(), in);
  auto r8 = testing::run_compiled(eight, trn2(), in);
  expect_bit_identical(r1.outputs.at("y"), r8.outputs.at("y"));
  // And both are right: fp32 TensorE against a double reference (K = 320 terms).
  const auto w = values(static_cast<size_t>(K * N), 7), b = values(static_cast<size_t>(N), 8);
  const auto& x = in.at("x");
  const auto& y = r8.outputs.at("y");
  double worst = 0;
  for (int64_t i = 0; i < M; i += 17)
    for (int64_t j = 0; j < N; ++j) {
      double s = b[static_cast<size_t>(j)];
      for (int64_t t = 0; t < K; ++t) s += double(x[static_cast<size_t>(i * K + t)]) * w[static_cast<size_t>(t * N + j)];
      worst = std::max(worst, std::fabs(s - y[static_cast<size_t>(i * N + j)]));
    }
  EXPECT_LT(worst, 1e-4);
}

TEST(CoreSplit, LargeMatmulIsSeveralTimesFasterOnEightCores) {
  // [1024 x 2048] @ [2048 x 2048] bf16: 8.6 GFLOP, about 110 us on one core's TensorE (the
  // single core runs at about 65% of that since the weights stay resident). On 8 cores each
  // reads its rows of A and its columns of B (the 2-D split: 3 row tiles, a third of the
  // columns, about 5.7 MB) at its 368 GB/s of DMA (16 us) and does an eighth of the TensorE
  // work (14 us, plus its A transposes): expect at least 3.5x.
  const auto m = matmul_model(1024, 2048, 2048);
  const double t1 = testing::run_compiled(compiled(m, 1, DTypePolicy::BF16), trn2(), {}, core::Mode::Timing).time_s;
  const double t8 = testing::run_compiled(compiled(m, 8, DTypePolicy::BF16), trn2(), {}, core::Mode::Timing).time_s;
  std::cout << "matmul 1024x2048x2048 bf16 trn2: 1 core " << t1 * 1e6 << " us, 8 cores " << t8 * 1e6 << " us\n";
  EXPECT_GT(t1 / t8, 3.5);
}

TEST(CoreSplit, SoftmaxAndLayerNormSplitByRows) {
  OnnxModel g;
  const int64_t R = 600, C = 96;
  g.input("x", {R, C}).floats("gamma", {C}, values(C, 1)).floats("beta", {C}, values(C, 2));
  OnnxModel::attr(g.node("Softmax", {"x"}, {"s"}, "sm"), "axis", int64_t{-1});
  OnnxModel::attr(g.node("LayerNormalization", {"x", "gamma", "beta"}, {"l"}, "ln"), "axis", int64_t{-1});
  g.output("s").output("l");
  auto one = compiled(g, 1), eight = compiled(g, 8);
  EXPECT_EQ(cores_of(eight, "sm"), 5);  // 600 rows: 5 tiles of 128
  EXPECT_EQ(cores_of(eight, "ln"), 5);
  std::map<std::string, std::vector<float>> in{{"x", values(static_cast<size_t>(R * C), 3)}};
  auto r1 = testing::run_compiled(one, trn2(), in), r8 = testing::run_compiled(eight, trn2(), in);
  expect_bit_identical(r1.outputs.at("s"), r8.outputs.at("s"));
  expect_bit_identical(r1.outputs.at("l"), r8.outputs.at("l"));
  // The softmax rows still sum to 1 (fp32).
  const auto& s = r8.outputs.at("s");
  for (int64_t r = 0; r < R; r += 37) {
    double sum = 0;
    for (int64_t c = 0; c < C; ++c) sum += s[static_cast<size_t>(r * C + c)];
    EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << r;
  }
}

TEST(CoreSplit, AttentionSplitsByHeads) {
  // [B=2, H=3, S=64, D=32] attention without mask: 6 heads on up to 6 cores.
  OnnxModel g;
  g.input("q", {2, 3, 64, 32}).input("k", {2, 3, 64, 32}).input("v", {2, 3, 64, 32});
  OnnxModel::attr(g.node("Transpose", {"k"}, {"kT"}, "tk"), "perm", std::vector<int64_t>{0, 1, 3, 2});
  g.node("MatMul", {"q", "kT"}, {"s"}, "qk");
  OnnxModel::attr(g.node("Softmax", {"s"}, {"p"}, "softmax"), "axis", int64_t{-1});
  g.node("MatMul", {"p", "v"}, {"y"}, "pv");
  g.output("y");
  auto one = compiled(g, 1, DTypePolicy::BF16), eight = compiled(g, 8, DTypePolicy::BF16);
  ASSERT_EQ(eight.segments.size(), 1u);
  EXPECT_EQ(eight.segments[0].op, "FusedAttention");
  EXPECT_EQ(program_cores(eight.segments[0]), 6);
  const size_t e = 2 * 3 * 64 * 32;
  std::map<std::string, std::vector<float>> in{{"q", values(e, 1)}, {"k", values(e, 2)}, {"v", values(e, 3)}};
  expect_bit_identical(testing::run_compiled(one, trn2(), in).outputs.at("y"),
                       testing::run_compiled(eight, trn2(), in).outputs.at("y"));
  const double t1 = testing::run_compiled(one, trn2(), {}, core::Mode::Timing).time_s;
  const double t8 = testing::run_compiled(eight, trn2(), {}, core::Mode::Timing).time_s;
  std::cout << "attention 6 heads: 1 core " << t1 * 1e6 << " us, 6 cores " << t8 * 1e6 << " us\n";
  // One core interleaves the six heads' softmax chains (8.1 us, was 12.3 us before the heads
  // were interleaved), so the split gains less than it did: at least 1.6x.
  EXPECT_LT(t8, t1 / 1.6);
}

TEST(CoreSplit, EmbeddingGatherSplitsTheIndexTiles) {
  // A [3000, 48] table, 300 run-time indices (some negative): 3 tiles of <= 128 indices, one
  // indirect DMA each, on 3 cores. The rows are copied, never computed, so every core count
  // and every dtype policy gives the table's values bit for bit.
  const int64_t V = 3000, D = 48, T = 300;
  OnnxModel g;
  g.input("ids", {T}, onnx::TensorProto::INT64).floats("table", {V, D}, values(static_cast<size_t>(V * D), 5));
  g.node("Gather", {"table", "ids"}, {"y"}, "embed");
  g.output("y");
  auto one = compiled(g, 1), eight = compiled(g, 8);
  EXPECT_EQ(cores_of(eight, "embed"), 3);
  std::vector<float> ids(T);
  for (int64_t t = 0; t < T; ++t) ids[static_cast<size_t>(t)] = static_cast<float>((t * 677) % V - (t % 5 == 0 ? V : 0));
  std::map<std::string, std::vector<float>> in{{"ids", ids}};
  auto r1 = testing::run_compiled(one, trn2(), in), r8 = testing::run_compiled(eight, trn2(), in);
  auto rb = testing::run_compiled(compiled(g, 8, DTypePolicy::BF16), trn2(), in);
  expect_bit_identical(r1.outputs.at("y"), r8.outputs.at("y"));
  expect_bit_identical(r1.outputs.at("y"), rb.outputs.at("y"));
  const auto table = values(static_cast<size_t>(V * D), 5);
  for (int64_t t = 0; t < T; ++t) {
    int64_t row = static_cast<int64_t>(ids[static_cast<size_t>(t)]);
    if (row < 0) row += V;
    for (int64_t d = 0; d < D; ++d)
      ASSERT_EQ(r8.outputs.at("y")[static_cast<size_t>(t * D + d)], table[static_cast<size_t>(row * D + d)]) << t << "," << d;
  }
  const double t1 = testing::run_compiled(one, trn2(), {}, core::Mode::Timing).time_s;
  const double t8 = testing::run_compiled(eight, trn2(), {}, core::Mode::Timing).time_s;
  std::cout << "gather [3000 x 48] x 300 ids: 1 core " << t1 * 1e6 << " us, 3 cores " << t8 * 1e6 << " us\n";
  EXPECT_LT(t8, t1);
}

TEST(CoreSplit, EmbeddingGatherOutOfRangeIndexIsAnError) {
  // onnxruntime refuses an index outside [-rows, rows); so does the simulated DMA, naming it.
  OnnxModel g;
  g.input("ids", {4}, onnx::TensorProto::INT64).floats("table", {10, 8}, values(80, 5));
  g.node("Gather", {"table", "ids"}, {"y"}, "embed");
  g.output("y");
  try {
    testing::run_compiled(compiled(g, 1), trn2(), {{"ids", {1, 2, 10, 3}}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("index 10 at partition 2 is not a row of the 10-row table"), std::string::npos) << e.what();
  }
}

TEST(CoreSplit, ElementwiseSplitsByColumnsBitIdentically) {
  // [128, 384]: one row tile, so 6 column ranges of 64 (kMinElementwiseCols) on 6 cores; a
  // scalar constant (memset per core), a broadcast bias and a full second operand. Small
  // nodes and casts stay on one core.
  const int64_t R = 128, C = 384;
  OnnxModel g;
  g.input("x", {R, C}).input("w", {R, C}).floats("half", {}, {0.5f}).floats("b", {C}, values(C, 4));
  g.floats("s", {8, 16}, values(128, 6));
  g.node("Mul", {"x", "half"}, {"h"}, "mul");
  g.node("Add", {"h", "b"}, {"a"}, "add");
  g.node("Div", {"a", "w"}, {"y"}, "div");
  g.input("t", {8, 16});
  g.node("Sub", {"t", "s"}, {"z"}, "small");
  g.node("Floor", {"x"}, {"f"}, "floor");
  g.output("y").output("z").output("f");
  auto one = compiled(g, 1), eight = compiled(g, 8);
  EXPECT_EQ(cores_of(eight, "mul"), 6);  // mul, add, div: one fused element-wise chain
  EXPECT_EQ(cores_of(eight, "add"), -1);
  EXPECT_EQ(cores_of(eight, "div"), -1);
  EXPECT_EQ(cores_of(eight, "small"), 1);
  EXPECT_EQ(cores_of(eight, "floor"), 1);
  auto xs = values(static_cast<size_t>(R * C), 9), ws = values(static_cast<size_t>(R * C), 10);
  for (auto& v : ws) v = v < 0 ? v - 0.5f : v + 0.5f;  // away from zero
  std::map<std::string, std::vector<float>> in{{"x", xs}, {"w", ws}, {"t", values(128, 11)}};
  auto r1 = testing::run_compiled(one, trn2(), in), r8 = testing::run_compiled(eight, trn2(), in);
  for (const char* o : {"y", "z", "f"}) expect_bit_identical(r1.outputs.at(o), r8.outputs.at(o));
  // Against fp32 arithmetic on the host: each op is one correctly rounded fp32 operation.
  const auto bias = values(C, 4);
  const auto& y = r8.outputs.at("y");
  for (int64_t i = 0; i < R * C; ++i) {
    const float want = (xs[static_cast<size_t>(i)] * 0.5f + bias[static_cast<size_t>(i % C)]) / ws[static_cast<size_t>(i)];
    ASSERT_NEAR(y[static_cast<size_t>(i)], want, 1e-6f * std::fabs(want) + 1e-30f) << i;
  }
  // A bigger add: 6 x 8 column ranges of [128, 4096] on 8 cores is well over twice as fast.
  OnnxModel big;
  big.input("p", {128, 4096}).input("q", {128, 4096});
  big.node("Add", {"p", "q"}, {"r"}, "add");
  big.output("r");
  const double t1 = testing::run_compiled(compiled(big, 1), trn2(), {}, core::Mode::Timing).time_s;
  const double t8 = testing::run_compiled(compiled(big, 8), trn2(), {}, core::Mode::Timing).time_s;
  std::cout << "add [128 x 4096] fp32: 1 core " << t1 * 1e6 << " us, 8 cores " << t8 * 1e6 << " us\n";
  EXPECT_LT(t8, t1 / 2);
}

TEST(CoreSplit, MoreCoresThanTheChipHasIsAConfigError) {
  try {
    compiled(matmul_model(8, 8, 8), 9);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("8 NeuronCores"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trnsim::compiler
