// Matmuls of one row tile (an encoder at batch 1): the epilogue's row-broadcast operands are
// read from HBM once, not once per partition, and the whole weight is resident so that every
// block can load ahead. References: a plain C++ loop for the values, closed forms for the bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <variant>

#include "../compiler/onnx_model.h"
#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/loaded_model.h"

namespace trnsim::runtime {
namespace {

using testing::OnnxModel;
using testing::values;

// MatMul + bias + LayerNorm(scale, shift): three row-broadcast operands in the epilogue.
// HBM bytes in closed form: A, the weight and the output once each, and each of the three
// [N] rows once (read per partition they were 128 x N x 4 bytes each).
TEST(MatmulOneTile, BroadcastRowsAreReadOnceAndValuesMatchALoop) {
  const int M = 128, K = 256, N = 1024;
  OnnxModel m;
  m.input("a", {M, K});
  m.floats("w", {K, N}, values(K * N, 21)).floats("bias", {N}, values(N, 22));
  m.floats("g", {N}, values(N, 23)).floats("beta", {N}, values(N, 24));
  m.node("MatMul", {"a", "w"}, {"mm"});
  m.node("Add", {"mm", "bias"}, {"h"});
  m.node("LayerNormalization", {"h", "g", "beta"}, {"y"});
  m.output("y");
  auto a = values(M * K, 25), w = values(K * N, 21), bias = values(N, 22), g = values(N, 23), beta = values(N, 24);
  std::vector<double> want(size_t(M) * N), row(N);
  for (int r = 0; r < M; ++r) {
    double mean = 0, var = 0;
    for (int c = 0; c < N; ++c) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += double(a[size_t(r) * K + k]) * w[size_t(k) * N + c];
      row[c] = s + bias[c];
      mean += row[c] / N;
    }
    for (int c = 0; c < N; ++c) var += (row[c] - mean) * (row[c] - mean) / N;
    for (int c = 0; c < N; ++c) want[size_t(r) * N + c] = (row[c] - mean) / std::sqrt(var + 1e-5) * g[c] + beta[c];
  }
  const hw::ChipSpec chip = hw::load_chip("trn1");
  compiler::CompileOptions o;
  o.cores = 1;
  auto cm = compiler::compile(compiler::import_onnx_bytes(m.bytes()), chip, o);
  const auto out = LoadedModel(cm, chip).run({{"a", a}}, core::Mode::Functional);
  const auto& got = out.outputs.at("y");
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4 + 1e-4 * std::fabs(want[i])) << "element " << i;
  const double bytes = 4.0 * (double(M) * K + double(K) * N + double(M) * N + 3.0 * N);
  EXPECT_DOUBLE_EQ(out.report.hbm_bytes, bytes);
}

// BERT-base's FFN-in at batch 1 (128 x 768 x 3072, bf16): the weight fits the kernel's half of
// SBUF, so it is held whole: every byte of it is loaded exactly once and no weight load waits
// for a slot that a matmul of the same kernel must free first (a ring of two blocks made the
// third block's loads wait, so only a third of the weight could load under earlier nodes).
TEST(MatmulOneTile, WholeWeightIsResidentSoNoWeightLoadWaitsInTheKernel) {
  const int M = 128, K = 768, N = 3072;
  OnnxModel m;
  m.input("a", {M, K});
  m.floats("w", {K, N}, values(K * N, 31)).floats("bias", {N}, values(N, 32));
  m.node("MatMul", {"a", "w"}, {"mm"});
  m.node("Add", {"mm", "bias"}, {"y"});
  m.output("y");
  compiler::CompileOptions o;
  o.cores = 1;
  o.policy = compiler::DTypePolicy::BF16;
  o.timing_only = true;
  auto cm = compiler::compile(compiler::import_onnx_bytes(m.bytes()), hw::load_chip("trn1"), o);
  int64_t weight_bytes = 0, weight_loads = 0, waiting = 0;
  for (const auto& seg : cm.segments) {
    const int wi = seg.program.tensor_index("w");
    if (seg.kind != compiler::Segment::Kind::Kernel || wi < 0) continue;
    for (const auto& core : seg.program.cores)
      for (const auto& q : core.dma_queues)
        for (const auto& ins : q)
          if (const auto* d = std::get_if<isa::Dma>(&ins.op); d && d->src.space == isa::Space::HBM && d->src.tensor == uint32_t(wi)) {
            weight_bytes += d->dst.bytes();
            ++weight_loads;
            waiting += ins.sync.num_waits > 0;
          }
  }
  EXPECT_GT(weight_loads, 0);
  EXPECT_EQ(weight_bytes, int64_t(K) * N * 2);
  EXPECT_EQ(waiting, 0);
}

// RoBERTa-large's FFN-out at batch 1 (128 x 4096 x 1024, bf16, bias + residual + LayerNorm):
// with one row tile there is no next A^T to build ahead, so the one A^T fits the budget and A
// is read from HBM once; holding room for two made it re-load A for every column block.
// Closed form of the HBM bytes: A, weight, residual, output once, three [N] rows once.
TEST(MatmulOneTile, DeepKReadsAOnceAtOneRowTile) {
  const int M = 128, K = 4096, N = 1024;
  OnnxModel m;
  m.input("a", {M, K}).input("res", {M, N});
  m.floats("w", {K, N}, values(K * N, 41)).floats("bias", {N}, values(N, 42));
  m.floats("g", {N}, values(N, 43)).floats("beta", {N}, values(N, 44));
  m.node("MatMul", {"a", "w"}, {"mm"});
  m.node("Add", {"mm", "bias"}, {"h"});
  m.node("Add", {"h", "res"}, {"r"});
  m.node("LayerNormalization", {"r", "g", "beta"}, {"y"});
  m.output("y");
  compiler::CompileOptions o;
  o.cores = 1;
  o.policy = compiler::DTypePolicy::BF16;
  const hw::ChipSpec chip = hw::load_chip("trn1");
  auto cm = compiler::compile(compiler::import_onnx_bytes(m.bytes()), chip, o);
  auto a = values(M * K, 45), res = values(M * N, 46), w = values(K * N, 41), bias = values(N, 42), g = values(N, 43), beta = values(N, 44);
  const auto out = LoadedModel(cm, chip).run({{"a", a}, {"res", res}}, core::Mode::Functional);
  const double bytes = 4.0 * M * K + 2.0 * K * N + 4.0 * 2 * M * N + 4.0 * 3 * N;
  EXPECT_DOUBLE_EQ(out.report.hbm_bytes, bytes);
  // Values: the loop with the matmul operands rounded to bf16 (the policy), fp32-exact otherwise.
  auto bf16 = [](float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    std::memcpy(&x, &u, 4);
    return double(x);
  };
  std::vector<double> wr(w.size()), row(N);
  for (size_t i = 0; i < w.size(); ++i) wr[i] = bf16(w[i]);
  const auto& got = out.outputs.at("y");
  for (int r = 0; r < M; r += 17) {  // every 17th row: the loop stays fast
    double mean = 0, var = 0;
    for (int c = 0; c < N; ++c) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += bf16(a[size_t(r) * K + k]) * wr[size_t(k) * N + c];
      row[c] = s + bias[c] + res[size_t(r) * N + c];
      mean += row[c] / N;
    }
    for (int c = 0; c < N; ++c) var += (row[c] - mean) * (row[c] - mean) / N;
    for (int c = 0; c < N; ++c) {
      const double want = (row[c] - mean) / std::sqrt(var + 1e-5) * g[c] + beta[c];
      ASSERT_NEAR(got[size_t(r) * N + c], want, 1e-3 + 1e-3 * std::fabs(want)) << "row " << r << " col " << c;
    }
  }
}

}  // namespace
}  // namespace trnsim::runtime
