// The attention-fusion pass on hand-built graphs shaped like PyTorch's exports: BERT (heads
// split by Transposes, Div by sqrt(head_dim), a [B,1,1,S] key-padding mask, the output
// Transpose back) and Llama (Mul by the scale, a [S,S] causal mask constant, no-op Casts after
// the softmax). Checks that the pass fires (one FusedAttention segment that names the nodes it
// replaced, the Transposes absorbed), that the result matches a double reference of
// softmax(scale * Q K^T + mask) V (fp32: 2e-5 absolute; bf16: 1e-2 absolute, P and the
// operands rounded to bf16) and the unfused compile, and that near-misses are left alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "onnx_model.h"
#include "run_compiled.h"
#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/hw/spec_loader.h"

namespace trnsim::compiler {
namespace {

using trnsim::testing::OnnxModel;
using trnsim::testing::values;

constexpr float kMin = -3.4028234663852886e38f;

const hw::ChipSpec& trn2() {
  static const hw::ChipSpec chip = hw::load_chip("trn2");
  return chip;
}

CompiledModel compiled(const OnnxModel& m, DTypePolicy p = DTypePolicy::FP32, bool fuse = true, int cores = 1) {
  CompileOptions o;
  o.policy = p;
  o.fuse = fuse;
  o.cores = cores;
  o.keep_ir = true;
  return compile(import_onnx_bytes(m.bytes()), trn2(), o);
}

int count_op(const CompiledModel& cm, const std::string& op) {
  return static_cast<int>(std::count_if(cm.segments.begin(), cm.segments.end(), [&](const Segment& s) { return s.op == op; }));
}

struct Dims {
  int64_t b = 2, s = 48, h = 3, d = 16;
};

// BERT's self-attention after the Q/K/V projections: inputs q4, k4, v4 [B, S, H, D] and the
// additive mask [B, 1, 1, S]; output y [B, S, H, D].
OnnxModel bert_block(const Dims& n) {
  OnnxModel m;
  m.input("q4", {n.b, n.s, n.h, n.d}).input("k4", {n.b, n.s, n.h, n.d}).input("v4", {n.b, n.s, n.h, n.d});
  m.input("mask", {n.b, 1, 1, n.s});
  m.floats("sqrt_d", {}, {std::sqrt(static_cast<float>(n.d))});
  OnnxModel::attr(m.node("Transpose", {"q4"}, {"q"}, "tq"), "perm", std::vector<int64_t>{0, 2, 1, 3});
  OnnxModel::attr(m.node("Transpose", {"k4"}, {"kT"}, "tk"), "perm", std::vector<int64_t>{0, 2, 3, 1});
  OnnxModel::attr(m.node("Transpose", {"v4"}, {"v"}, "tv"), "perm", std::vector<int64_t>{0, 2, 1, 3});
  m.node("MatMul", {"q", "kT"}, {"s"}, "qk");
  m.node("Div", {"s", "sqrt_d"}, {"s2"}, "scale");
  m.node("Add", {"s2", "mask"}, {"s3"}, "add_mask");
  OnnxModel::attr(m.node("Softmax", {"s3"}, {"p"}, "softmax"), "axis", int64_t{-1});
  m.node("MatMul", {"p", "v"}, {"o"}, "pv");
  OnnxModel::attr(m.node("Transpose", {"o"}, {"y"}, "to"), "perm", std::vector<int64_t>{0, 2, 1, 3});
  m.output("y");
  return m;
}

struct Inputs {
  std::map<std::string, std::vector<float>> feeds;
};

Inputs bert_inputs(const Dims& n) {
  Inputs in;
  const size_t e = static_cast<size_t>(n.b * n.s * n.h * n.d);
  in.feeds["q4"] = values(e, 1);
  in.feeds["k4"] = values(e, 2);
  in.feeds["v4"] = values(e, 3);
  std::vector<float> mask(static_cast<size_t>(n.b * n.s), 0.0f);
  for (int64_t j = n.s - 13; j < n.s; ++j) mask[static_cast<size_t>((n.b - 1) * n.s + j)] = kMin;  // last batch padded
  in.feeds["mask"] = mask;
  return in;
}

// The double reference for [B, S, H, D] q/k/v, out [B, S, H, D]; mask(bi, i, j).
template <typename Mask>
std::vector<double> reference(const Dims& n, const std::vector<float>& q, const std::vector<float>& k,
                              const std::vector<float>& v, double scale, Mask mask) {
  auto at = [&](int64_t bi, int64_t si, int64_t hi, int64_t di) { return static_cast<size_t>(((bi * n.s + si) * n.h + hi) * n.d + di); };
  std::vector<double> out(q.size(), 0.0), sc(static_cast<size_t>(n.s));
  for (int64_t bi = 0; bi < n.b; ++bi)
    for (int64_t hi = 0; hi < n.h; ++hi)
      for (int64_t i = 0; i < n.s; ++i) {
        double mx = -INFINITY, l = 0;
        for (int64_t j = 0; j < n.s; ++j) {
          double dot = 0;
          for (int64_t x = 0; x < n.d; ++x) dot += double(q[at(bi, i, hi, x)]) * k[at(bi, j, hi, x)];
          sc[j] = scale * dot + mask(bi, i, j);
          mx = std::max(mx, sc[j]);
        }
        for (int64_t j = 0; j < n.s; ++j) l += (sc[j] = std::exp(sc[j] - mx));
        for (int64_t j = 0; j < n.s; ++j)
          for (int64_t x = 0; x < n.d; ++x) out[at(bi, i, hi, x)] += sc[j] / l * v[at(bi, j, hi, x)];
      }
  return out;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

TEST(AttentionFusion, BertPatternFusesIntoOneKernel) {
  const Dims n;
  auto cm = compiled(bert_block(n));
  EXPECT_EQ(count_op(cm, "FusedAttention"), 1);
  EXPECT_EQ(count_op(cm, "Softmax"), 0);
  EXPECT_EQ(count_op(cm, "MatMul"), 0);
  EXPECT_EQ(count_op(cm, "Transpose"), 0);  // the head split/merge Transposes became strides
  ASSERT_EQ(cm.segments.size(), 1u);
  const auto& f = cm.segments[0].fused;
  for (const char* name : {"softmax", "qk", "scale", "add_mask", "tq", "tk", "tv", "to"})
    EXPECT_NE(std::find(f.begin(), f.end(), name), f.end()) << name;
  // The pass is named in the IR dump, and its IR holds the fused node.
  EXPECT_NE(cm.dump_ir().find("=== after pass 'attention-fusion'"), std::string::npos);
  EXPECT_NE(cm.dump_ir().find("FusedAttention("), std::string::npos);
}

TEST(AttentionFusion, BertPatternMatchesReferenceAndUnfused) {
  const Dims n;
  const Inputs in = bert_inputs(n);
  const auto& mask = in.feeds.at("mask");
  auto want = reference(n, in.feeds.at("q4"), in.feeds.at("k4"), in.feeds.at("v4"), 1.0 / std::sqrt(double(n.d)),
                        [&](int64_t bi, int64_t, int64_t j) { return double(mask[static_cast<size_t>(bi * n.s + j)]); });
  auto fused = testing::run_compiled(compiled(bert_block(n)), trn2(), in.feeds);
  auto unfused = testing::run_compiled(compiled(bert_block(n), DTypePolicy::FP32, false), trn2(), in.feeds);
  EXPECT_LT(max_abs_diff(fused.outputs.at("y"), want), 2e-5);
  EXPECT_LT(max_abs_diff(unfused.outputs.at("y"), want), 2e-5);
  auto bf16 = testing::run_compiled(compiled(bert_block(n), DTypePolicy::BF16), trn2(), in.feeds);
  EXPECT_LT(max_abs_diff(bf16.outputs.at("y"), want), 1e-2);
}

TEST(AttentionFusion, SplitAcrossCoresAbsorbsTheOutputTransposeAndMatches) {
  // Split by heads over 8 cores, each core writes its heads straight into [B, S, H, D] through
  // strides (the writes interleave but share no byte); the result is the same as one core's.
  const Dims n;
  auto cm = compiled(bert_block(n), DTypePolicy::FP32, true, 8);
  EXPECT_EQ(count_op(cm, "FusedAttention"), 1);
  EXPECT_EQ(count_op(cm, "Transpose"), 0);
  ASSERT_EQ(cm.segments.size(), 1u);
  int busy_cores = 0;
  for (const auto& cp : cm.segments[0].program.cores) busy_cores += cp.instruction_count() > 0;
  EXPECT_GT(busy_cores, 1);
  const Inputs in = bert_inputs(n);
  const auto& mask = in.feeds.at("mask");
  auto want = reference(n, in.feeds.at("q4"), in.feeds.at("k4"), in.feeds.at("v4"), 1.0 / std::sqrt(double(n.d)),
                        [&](int64_t bi, int64_t, int64_t j) { return double(mask[static_cast<size_t>(bi * n.s + j)]); });
  EXPECT_LT(max_abs_diff(testing::run_compiled(cm, trn2(), in.feeds).outputs.at("y"), want), 2e-5);
}

TEST(AttentionFusion, FusedIsFasterThanUnfused) {
  const Dims n{1, 256, 8, 64};
  auto t_fused = testing::run_compiled(compiled(bert_block(n)), trn2(), {}, core::Mode::Timing).time_s;
  auto t_unfused = testing::run_compiled(compiled(bert_block(n), DTypePolicy::FP32, false), trn2(), {}, core::Mode::Timing).time_s;
  std::cout << "attention [1,8,256,64] fp32: fused " << t_fused * 1e6 << " us, unfused " << t_unfused * 1e6 << " us\n";
  EXPECT_LT(t_fused, t_unfused);
}

// Llama's eager attention: Q [B,H,S,D] and K^T from a Transpose of K [B,H,S,D] (perm 0,1,3,2),
// Mul by the scale, Add of a [S,S] causal mask constant, Softmax, two no-op Casts, MatMul V.
OnnxModel llama_block(const Dims& n, std::vector<float>* mask_out) {
  OnnxModel m;
  m.input("q", {n.b, n.h, n.s, n.d}).input("k", {n.b, n.h, n.s, n.d}).input("v", {n.b, n.h, n.s, n.d});
  std::vector<float> mask(static_cast<size_t>(n.s * n.s), 0.0f);
  for (int64_t i = 0; i < n.s; ++i)
    for (int64_t j = i + 1; j < n.s; ++j) mask[static_cast<size_t>(i * n.s + j)] = kMin;
  *mask_out = mask;
  m.floats("causal", {n.s, n.s}, mask);
  m.floats("scale_c", {}, {0.3f});
  OnnxModel::attr(m.node("Transpose", {"k"}, {"kT"}, "tk"), "perm", std::vector<int64_t>{0, 1, 3, 2});
  m.node("MatMul", {"q", "kT"}, {"s"}, "qk");
  m.node("Mul", {"s", "scale_c"}, {"s2"}, "scale");
  m.node("Add", {"s2", "causal"}, {"s3"}, "add_mask");
  OnnxModel::attr(m.node("Softmax", {"s3"}, {"p"}, "softmax"), "axis", int64_t{3});
  OnnxModel::attr(m.node("Cast", {"p"}, {"p1"}, "cast"), "to", int64_t{1});
  OnnxModel::attr(m.node("Cast", {"p1"}, {"p2"}, "cast_1"), "to", int64_t{1});
  m.node("MatMul", {"p2", "v"}, {"y"}, "pv");
  m.output("y");
  return m;
}

TEST(AttentionFusion, LlamaPatternWithCausalMaskAndCasts) {
  const Dims n{2, 20, 4, 16};
  std::vector<float> mask;
  auto m = llama_block(n, &mask);
  auto cm = compiled(m);
  ASSERT_EQ(count_op(cm, "FusedAttention"), 1);
  EXPECT_EQ(count_op(cm, "Cast"), 0);
  const size_t e = static_cast<size_t>(n.b * n.h * n.s * n.d);
  std::map<std::string, std::vector<float>> feeds{{"q", values(e, 4)}, {"k", values(e, 5)}, {"v", values(e, 6)}};
  // The reference takes [B,S,H,D]: view the [B,H,S,D] tensors with H and S swapped.
  const Dims r{n.b * n.h, n.s, 1, n.d};
  auto want = reference(r, feeds["q"], feeds["k"], feeds["v"], 0.3,
                        [&](int64_t, int64_t i, int64_t j) { return double(mask[static_cast<size_t>(i * n.s + j)]); });
  auto got = testing::run_compiled(cm, trn2(), feeds);
  EXPECT_LT(max_abs_diff(got.outputs.at("y"), want), 2e-5);
}

TEST(AttentionFusion, ScoresThatAreAlsoReadElsewhereAreNotFused) {
  // The softmax output is a graph output too: the [.., S, S] probabilities must exist in HBM.
  const Dims n{1, 32, 2, 16};
  auto m = bert_block(n);
  m.output("p");
  auto cm = compiled(m);
  EXPECT_EQ(count_op(cm, "FusedAttention"), 0);
  EXPECT_EQ(count_op(cm, "Softmax"), 1);
  const Inputs in = bert_inputs(n);
  const auto& mask = in.feeds.at("mask");
  auto want = reference(n, in.feeds.at("q4"), in.feeds.at("k4"), in.feeds.at("v4"), 1.0 / std::sqrt(double(n.d)),
                        [&](int64_t bi, int64_t, int64_t j) { return double(mask[static_cast<size_t>(bi * n.s + j)]); });
  EXPECT_LT(max_abs_diff(testing::run_compiled(cm, trn2(), in.feeds).outputs.at("y"), want), 2e-5);
}

TEST(AttentionFusion, HeadDimOver128StaysUnfused) {
  const Dims n{1, 16, 1, 160};
  EXPECT_EQ(count_op(compiled(bert_block(n)), "FusedAttention"), 0);
}

}  // namespace
}  // namespace trnsim::compiler
