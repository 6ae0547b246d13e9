// Each lowering on a tiny graph, run in functional mode, against a plain C++ loop written
// here (not the compiler's host evaluator). fp32 policy: |got - want| <= 1e-5 + 1e-4 |want|.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "../compiler/onnx_model.h"
#include "one_node_model.h"
#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/loaded_model.h"

namespace trnsim::runtime {
namespace {

using testing::OnnxModel;
using testing::values;

const hw::ChipSpec& chip() {
  static const hw::ChipSpec c = hw::load_chip("trn2");
  return c;
}

std::vector<float> run1(const OnnxModel& m, const std::map<std::string, std::vector<float>>& in, const std::string& out,
                        compiler::DTypePolicy p = compiler::DTypePolicy::FP32) {
  compiler::CompileOptions o;
  o.policy = p;
  auto cm = compiler::compile(compiler::import_onnx_bytes(m.bytes()), chip(), o);
  LoadedModel lm(cm, chip());
  return lm.run(in, core::Mode::Functional).outputs.at(out);
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double rel = 1e-4, double abs = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], abs + rel * std::fabs(want[i])) << "element " << i;
}

TEST(Lowering, BatchedMatmulWithBroadcastAndManyTiles) {
  // [2, 1, 130, 200] @ [3, 200, 520]: M, K and N each span more than one tile.
  const int B1 = 2, B2 = 3, M = 130, K = 200, N = 520;
  OnnxModel m;
  m.input("a", {B1, 1, M, K}).input("b", {B2, K, N});
  m.node("MatMul", {"a", "b"}, {"y"});
  m.output("y");
  auto a = values(B1 * M * K, 1), b = values(B2 * K * N, 2);
  std::vector<double> want(static_cast<size_t>(B1) * B2 * M * N);
  for (int i = 0; i < B1; ++i)
    for (int j = 0; j < B2; ++j)
      for (int r = 0; r < M; ++r)
        for (int c = 0; c < N; ++c) {
          double s = 0;
          for (int k = 0; k < K; ++k) s += double(a[(i * M + r) * K + k]) * b[(j * K + k) * N + c];
          want[((size_t(i) * B2 + j) * M + r) * N + c] = s;
        }
  expect_close(run1(m, {{"a", a}, {"b", b}}, "y"), want, 1e-4, 1e-4);
}

// Decode-shaped matmuls stream the weight (K too deep for a resident block): one load per
// K tile feeds every 512-column bank, and A^T of a few rows comes in one DMA. Both row counts
// below the tile (1 and 3), a partial last K tile, two column blocks, two batch indices.
TEST(Lowering, DecodeShapedMatmulStreamsWeightsCorrectly) {
  for (const int M : {1, 3}) {
    const int B = 2, K = 2000, N = 1300;
    OnnxModel m;
    m.input("a", {B, M, K}).input("b", {K, N});
    m.node("MatMul", {"a", "b"}, {"y"});
    m.output("y");
    auto a = values(B * M * K, 5), b = values(K * N, 6);
    std::vector<double> want(static_cast<size_t>(B) * M * N);
    for (int r = 0; r < B * M; ++r)
      for (int c = 0; c < N; ++c) {
        double acc = 0;
        for (int k = 0; k < K; ++k) acc += double(a[size_t(r) * K + k]) * b[size_t(k) * N + c];
        want[size_t(r) * N + c] = acc;
      }
    expect_close(run1(m, {{"a", a}, {"b", b}}, "y"), want, 1e-4, 1e-4);
  }
}

// A weight too deep to stay resident, several row tiles (RoBERTa-large's FFN-out shape class):
// weight-stationary, each K tile of a column block is loaded once for a group of row tiles
// that accumulate in their own PSUM banks. Bias, residual and LayerNorm epilogues on top; a
// partial last row tile, K tile and column block. Closed form: the weight is read fewer times
// than there are row tiles (HBM bytes below A + residual + output + 2.5 x the weight; row by
// row it was 3 x).
TEST(Lowering, DeepWeightIsReadOncePerGroupOfRowTiles) {
  const int M = 260, K = 2560, N = 640;
  OnnxModel m;
  m.input("a", {M, K}).input("res", {M, N});
  m.floats("w", {K, N}, values(K * N, 11)).floats("bias", {N}, values(N, 12));
  m.floats("g", {N}, values(N, 13)).floats("beta", {N}, values(N, 14));
  m.node("MatMul", {"a", "w"}, {"mm"});
  m.node("Add", {"mm", "bias"}, {"h"});
  m.node("Add", {"h", "res"}, {"r"});
  m.node("LayerNormalization", {"r", "g", "beta"}, {"y"});
  m.output("y");
  auto a = values(M * K, 15), res = values(M * N, 16), w = values(K * N, 11), bias = values(N, 12), g = values(N, 13), beta = values(N, 14);
  std::vector<double> want(size_t(M) * N), row(N);
  for (int r = 0; r < M; ++r) {
    double mean = 0, var = 0;
    for (int c = 0; c < N; ++c) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += double(a[size_t(r) * K + k]) * w[size_t(k) * N + c];
      row[c] = s + bias[c] + res[size_t(r) * N + c];
      mean += row[c] / N;
    }
    for (int c = 0; c < N; ++c) var += (row[c] - mean) * (row[c] - mean) / N;
    for (int c = 0; c < N; ++c) want[size_t(r) * N + c] = (row[c] - mean) / std::sqrt(var + 1e-5) * g[c] + beta[c];
  }
  compiler::CompileOptions o;
  o.cores = 1;
  auto cm = compiler::compile(compiler::import_onnx_bytes(m.bytes()), chip(), o);
  const auto out = LoadedModel(cm, chip()).run({{"a", a}, {"res", res}}, core::Mode::Functional);
  expect_close(out.outputs.at("y"), want, 1e-4, 1e-4);
  const double bytes = 4.0 * (double(M) * K + 2.0 * M * N + 2.5 * double(K) * N);
  EXPECT_LT(out.report.hbm_bytes, bytes);
}

// GPT3-175B's fused Q/K/V projection per rank at TP 32 (a 2,048-token bf16 prompt): the
// weight-stationary group's A^T, the weight tiles in flight and every ring fit the kernel's
// half of SBUF (the group left no room for the result ring before).
TEST(Lowering, DeepWeightStationaryGroupFitsSbuf) {
  OnnxModel m;
  m.input("a", {2048, 12288}, onnx::TensorProto::BFLOAT16).input("w", {12288, 1152}, onnx::TensorProto::BFLOAT16);
  m.node("MatMul", {"a", "w"}, {"y"});
  m.output("y");
  EXPECT_NO_THROW(testing::compile_one_core(m, hw::load_chip("trn1"), compiler::DTypePolicy::BF16, true));
}

TEST(Lowering, Bf16PolicyRoundsMatmulOperandsOnly) {
  OnnxModel m;
  m.input("a", {64, 96}).input("b", {96, 32});
  m.node("MatMul", {"a", "b"}, {"y"});
  m.output("y");
  auto a = values(64 * 96, 3), b = values(96 * 32, 4);
  auto bf = [](float x) {  // round to nearest even bf16
    uint32_t u;
    std::memcpy(&u, &x, 4);
    u = (u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000u;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  };
  std::vector<double> want(64 * 32);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 32; ++c) {
      double s = 0;
      for (int k = 0; k < 96; ++k) s += double(bf(a[r * 96 + k])) * bf(b[k * 32 + c]);
      want[r * 32 + c] = s;
    }
  // fp32 accumulation of exact bf16 products: only summation order differs.
  expect_close(run1(m, {{"a", a}, {"b", b}}, "y", compiler::DTypePolicy::BF16), want, 1e-5, 1e-5);
}

TEST(Lowering, ConvMatchesDirectLoop) {
  const int N = 1, C = 3, H = 9, W = 7, M = 4, KH = 3, KW = 2, SH = 2, SW = 1, PH = 1, PW = 0;
  OnnxModel m;
  m.input("x", {N, C, H, W}).floats("w", {M, C, KH, KW}, values(M * C * KH * KW, 5)).floats("bias", {M}, values(M, 6));
  auto& n = m.node("Conv", {"x", "w", "bias"}, {"y"});
  OnnxModel::attr(n, "strides", std::vector<int64_t>{SH, SW});
  OnnxModel::attr(n, "pads", std::vector<int64_t>{PH, PW, PH, PW});
  m.output("y");
  auto x = values(N * C * H * W, 7), w = values(M * C * KH * KW, 5), bias = values(M, 6);
  const int OH = (H + 2 * PH - KH) / SH + 1, OW = (W + 2 * PW - KW) / SW + 1;
  std::vector<double> want(size_t(M) * OH * OW);
  for (int o = 0; o < M; ++o)
    for (int i = 0; i < OH; ++i)
      for (int j = 0; j < OW; ++j) {
        double s = bias[o];
        for (int c = 0; c < C; ++c)
          for (int p = 0; p < KH; ++p)
            for (int q = 0; q < KW; ++q) {
              int y = i * SH - PH + p, z = j * SW - PW + q;
              if (y >= 0 && y < H && z >= 0 && z < W) s += double(x[(c * H + y) * W + z]) * w[((o * C + c) * KH + p) * KW + q];
            }
        want[(size_t(o) * OH + i) * OW + j] = s;
      }
  expect_close(run1(m, {{"x", x}}, "y"), want);
}

TEST(Lowering, SoftmaxOverAMiddleAxis) {
  const int A = 3, B = 5, C = 4;
  OnnxModel m;
  m.input("x", {A, B, C});
  OnnxModel::attr(m.node("Softmax", {"x"}, {"y"}), "axis", int64_t{1});
  m.output("y");
  auto x = values(A * B * C, 8);
  std::vector<double> want(x.size());
  for (int a = 0; a < A; ++a)
    for (int c = 0; c < C; ++c) {
      double mx = -1e30, s = 0;
      for (int b = 0; b < B; ++b) mx = std::max(mx, double(x[(a * B + b) * C + c]));
      for (int b = 0; b < B; ++b) s += std::exp(x[(a * B + b) * C + c] - mx);
      for (int b = 0; b < B; ++b) want[(a * B + b) * C + c] = std::exp(x[(a * B + b) * C + c] - mx) / s;
    }
  expect_close(run1(m, {{"x", x}}, "y"), want);
}

TEST(Lowering, LayerNormAndReduceMean) {
  const int R = 6, C = 40;
  OnnxModel m(17);
  m.input("x", {R, C}).floats("g", {C}, values(C, 9)).floats("b", {C}, values(C, 10));
  m.node("LayerNormalization", {"x", "g", "b"}, {"y"});
  auto& r = m.node("ReduceMean", {"x"}, {"mean"});
  OnnxModel::attr(r, "axes", std::vector<int64_t>{0});
  OnnxModel::attr(r, "keepdims", int64_t{0});
  m.output("y").output("mean");
  auto x = values(R * C, 11), g = values(C, 9), b = values(C, 10);
  std::vector<double> want(x.size()), mean(C, 0.0);
  for (int i = 0; i < R; ++i) {
    double mu = 0, var = 0;
    for (int j = 0; j < C; ++j) mu += x[i * C + j];
    mu /= C;
    for (int j = 0; j < C; ++j) var += (x[i * C + j] - mu) * (x[i * C + j] - mu);
    var /= C;
    for (int j = 0; j < C; ++j) want[i * C + j] = (x[i * C + j] - mu) / std::sqrt(var + 1e-5) * g[j] + b[j];
    for (int j = 0; j < C; ++j) mean[j] += x[i * C + j] / double(R);
  }
  compiler::CompileOptions o;
  auto cm = compiler::compile(compiler::import_onnx_bytes(m.bytes()), chip(), o);
  auto out = LoadedModel(cm, chip()).run({{"x", x}}, core::Mode::Functional).outputs;
  expect_close(out.at("y"), want, 1e-4, 1e-4);
  expect_close(out.at("mean"), mean);
}

TEST(Lowering, TransposeSliceConcatAreExact) {
  OnnxModel m;
  m.input("x", {2, 3, 4}).ints("s", {1}, {1}).ints("e", {1}, {4}).ints("ax", {1}, {2}).ints("st", {1}, {2});
  auto& t = m.node("Transpose", {"x"}, {"t"});
  OnnxModel::attr(t, "perm", std::vector<int64_t>{2, 0, 1});   // [4, 2, 3]
  m.node("Slice", {"x", "s", "e", "ax", "st"}, {"sl"});         // [2, 3, 2]: columns 1, 3
  auto& c = m.node("Concat", {"sl", "x"}, {"y"});
  OnnxModel::attr(c, "axis", int64_t{2});                       // [2, 3, 6]
  m.output("t").output("y");
  auto x = values(24, 12);
  compiler::CompileOptions o;
  auto cm = compiler::compile(compiler::import_onnx_bytes(m.bytes()), chip(), o);
  auto out = LoadedModel(cm, chip()).run({{"x", x}}, core::Mode::Functional).outputs;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c2 = 0; c2 < 4; ++c2) EXPECT_EQ(out.at("t")[(c2 * 2 + a) * 3 + b], x[(a * 3 + b) * 4 + c2]);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b) {
      const float* row = &out.at("y")[(a * 3 + b) * 6];
      EXPECT_EQ(row[0], x[(a * 3 + b) * 4 + 1]);
      EXPECT_EQ(row[1], x[(a * 3 + b) * 4 + 3]);
      for (int c2 = 0; c2 < 4; ++c2) EXPECT_EQ(row[2 + c2], x[(a * 3 + b) * 4 + c2]);
    }
}

TEST(Lowering, GatherWithRunTimeIndicesIsExact) {
  const int V = 300, E = 5;
  OnnxModel m;
  m.input("ids", {2, 3}, onnx::TensorProto::INT64).floats("emb", {V, E}, values(V * E, 13));
  m.node("Gather", {"emb", "ids"}, {"y"});
  m.output("y");
  std::vector<float> ids = {0, 299, 17, -1, 128, 5};
  auto emb = values(V * E, 13);
  std::vector<double> want;
  for (float id : ids) {
    int k = id < 0 ? int(id) + V : int(id);
    for (int j = 0; j < E; ++j) want.push_back(emb[k * E + j]);
  }
  expect_close(run1(m, {{"ids", ids}}, "y"), want, 0, 0);
}

TEST(Lowering, ElementwiseBroadcastAndActivations) {
  OnnxModel m;
  m.input("x", {3, 1, 7}).input("y", {4, 1});
  m.node("Sub", {"x", "y"}, {"d"});        // [3, 4, 7]
  m.node("Tanh", {"d"}, {"t"});
  m.node("Greater", {"d", "t"}, {"gt"});
  m.node("Where", {"gt", "d", "t"}, {"w"});
  m.output("w");
  auto x = values(21, 14), y = values(4, 15);
  std::vector<double> want;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 4; ++b)
      for (int c = 0; c < 7; ++c) {
        double d = double(x[a * 7 + c]) - y[b];
        double t = std::tanh(d);
        want.push_back(d > t ? d : t);
      }
  expect_close(run1(m, {{"x", x}, {"y", y}}, "w"), want, 1e-5, 1e-6);
}

}  // namespace
}  // namespace trnsim::runtime
