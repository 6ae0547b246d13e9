// Tensor-parallel execution of a hand-built transformer block (LayerNorm, multi-head attention
// with a causal mask, GELU-free SiLU MLP, residual adds) on 2 and 4 chips of trn2.48xlarge.
// Functional results are compared with the same model on one chip: only the order of the
// K-axis sums differs (each rank sums its K/tp slice, the all-reduce sums the ranks), so the
// tolerance is fp32 round-off: |tp - single| <= 1e-5 (|single| + max|single|).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <sstream>

#include "../compiler/onnx_model.h"
#include <fmt/format.h>

#include "trnsim/collectives/collective.h"
#include "trnsim/hw/logical_cores.h"
#include "trnsim/common/error.h"
#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/loaded_model.h"
#include "trnsim/runtime/tensor_parallel_model.h"

namespace trnsim::runtime {
namespace {

using testing::OnnxModel;
using testing::values;

struct BlockShape {
  int64_t batch = 2, seq = 8, hidden = 32, heads = 4, ff = 64;
  int blocks = 1;
  bool parallel = false;  // GPT-J style: x + attn(ln(x)) + mlp(ln(x)); else attention, then MLP
  int64_t vocab = 0;      // > 0: a final LayerNorm and an LM head MatMul [hidden, vocab] -> "logits"
};

// One or more pre-norm transformer blocks in plain ONNX ops (MatMul, Add, Reshape, Transpose,
// Softmax, LayerNormalization, Sigmoid, Mul), with seeded weights.
OnnxModel transformer(const BlockShape& b) {
  OnnxModel m;
  const int64_t B = b.batch, S = b.seq, D = b.hidden, H = b.heads, hd = D / H, F = b.ff;
  m.input("x", {B, S, D});
  uint32_t seed = 10;
  auto w = [&](const std::string& n, std::vector<int64_t> shape, float scale) {
    size_t count = 1;
    for (auto d : shape) count *= static_cast<size_t>(d);
    auto v = values(count, seed++);
    for (auto& x : v) x *= scale;
    m.floats(n, shape, v);
  };
  std::vector<float> mask(static_cast<size_t>(S * S));
  for (int64_t i = 0; i < S; ++i)
    for (int64_t j = 0; j < S; ++j) mask[static_cast<size_t>(i * S + j)] = j <= i ? 0.0f : -1e9f;
  m.floats("mask", {1, 1, S, S}, mask);
  m.floats("scale", {}, {1.0f / std::sqrt(static_cast<float>(hd))});
  m.ints("heads_shape", {4}, {B, S, H, hd});
  m.ints("model_shape", {3}, {B, S, D});
  std::string x = "x";
  for (int l = 0; l < b.blocks; ++l) {
    auto p = [&](const std::string& n) { return fmt::format("l{}_{}", l, n); };
    auto ln = [&](const std::string& in, const std::string& name) {
      w(p(name + "_g"), {D}, 1.0f);
      w(p(name + "_b"), {D}, 0.1f);
      m.node("LayerNormalization", {in, p(name + "_g"), p(name + "_b")}, {p(name)}, p(name));
      return p(name);
    };
    auto linear = [&](const std::string& in, const std::string& name, int64_t k, int64_t n) {
      w(p(name + "_w"), {k, n}, 1.0f / std::sqrt(static_cast<float>(k)));
      w(p(name + "_bias"), {n}, 0.1f);
      m.node("MatMul", {in, p(name + "_w")}, {p(name + "_mm")}, p(name));
      m.node("Add", {p(name + "_mm"), p(name + "_bias")}, {p(name + "_out")}, p(name + "_add"));
      return p(name + "_out");
    };
    const std::string h = ln(x, "ln1");
    // Attention: heads [B, H, S, hd].
    auto heads = [&](const std::string& t, const std::string& n, std::vector<int64_t> perm) {
      m.node("Reshape", {t, "heads_shape"}, {p(n + "_4d")}, p(n + "_reshape"));
      auto& tr = m.node("Transpose", {p(n + "_4d")}, {p(n + "_h")}, p(n + "_transpose"));
      OnnxModel::attr(tr, "perm", perm);
      return p(n + "_h");
    };
    const std::string q = heads(linear(h, "q", D, D), "q", {0, 2, 1, 3});
    const std::string kt = heads(linear(h, "k", D, D), "k", {0, 2, 3, 1});
    const std::string v = heads(linear(h, "v", D, D), "v", {0, 2, 1, 3});
    m.node("MatMul", {q, kt}, {p("scores")}, p("qk"));
    m.node("Mul", {p("scores"), "scale"}, {p("scaled")}, p("scale"));
    m.node("Add", {p("scaled"), "mask"}, {p("masked")}, p("mask"));
    auto& sm = m.node("Softmax", {p("masked")}, {p("probs")}, p("softmax"));
    OnnxModel::attr(sm, "axis", int64_t{-1});
    m.node("MatMul", {p("probs"), v}, {p("ctx_h")}, p("pv"));
    auto& tr = m.node("Transpose", {p("ctx_h")}, {p("ctx_t")}, p("ctx_transpose"));
    OnnxModel::attr(tr, "perm", std::vector<int64_t>{0, 2, 1, 3});
    m.node("Reshape", {p("ctx_t"), "model_shape"}, {p("ctx")}, p("ctx_reshape"));
    const std::string attn = linear(p("ctx"), "o", D, D);
    // MLP: SiLU(h2 W1) W2.
    std::string mlp_in;
    if (b.parallel) {
      mlp_in = h;
    } else {
      m.node("Add", {x, attn}, {p("x1")}, p("residual1"));
      mlp_in = ln(p("x1"), "ln2");
    }
    const std::string up = linear(mlp_in, "up", D, F);
    m.node("Sigmoid", {up}, {p("sig")}, p("sigmoid"));
    m.node("Mul", {up, p("sig")}, {p("act")}, p("silu"));
    const std::string down = linear(p("act"), "down", F, D);
    if (b.parallel) {
      m.node("Add", {x, attn}, {p("x1")}, p("residual1"));
      m.node("Add", {p("x1"), down}, {p("y")}, p("residual2"));
    } else {
      m.node("Add", {p("x1"), down}, {p("y")}, p("residual2"));
    }
    x = p("y");
  }
  if (b.vocab > 0) {
    w("lnf_g", {D}, 1.0f);
    w("lnf_b", {D}, 0.1f);
    m.node("LayerNormalization", {x, "lnf_g", "lnf_b"}, {"lnf"}, "lnf");
    w("lm_head_w", {D, b.vocab}, 1.0f / std::sqrt(static_cast<float>(D)));
    m.node("MatMul", {"lnf", "lm_head_w"}, {"logits"}, "lm_head");
    m.output("logits");
    return m;
  }
  m.node("Identity", {x}, {"out"}, "out");
  m.output("out");
  return m;
}

const hw::SystemSpec& trn2_system() {
  static const hw::SystemSpec s = hw::load_system("trn2.48xlarge");
  return s;
}

std::vector<float> single_chip(const OnnxModel& m, const std::vector<float>& x, const std::string& out = "out") {
  auto cm = compiler::compile(compiler::import_onnx_bytes(m.bytes()), trn2_system().chip);
  LoadedModel lm(cm, trn2_system().chip);
  return lm.run({{"x", x}}, core::Mode::Functional).outputs.at(out);
}

TpRunOutput run_tp(const OnnxModel& m, int tp, const std::vector<float>& x, core::Mode mode, bool timeline = false,
                   compiler::DTypePolicy policy = compiler::DTypePolicy::FP32) {
  TpOptions o;
  o.tp = tp;
  o.all_ranks = mode == core::Mode::Functional;
  o.compile.policy = policy;
  TensorParallelModel tpm(compiler::import_onnx_bytes(m.bytes()), trn2_system(), o);
  EXPECT_TRUE(tpm.single_chip().segments.empty());  // the whole model is never lowered
  return tpm.run({{"x", x}}, mode, timeline);
}

double collective_time(collectives::Op op, int ranks, int64_t bytes, numerics::DType dt = numerics::DType::F32) {
  collectives::CollectiveOptions co;
  co.op = op;
  co.ranks = ranks;
  co.ranks_per_chip = std::min(ranks, hw::logical_cores(trn2_system().chip, 0));  // one rank per logical core
  co.dtype = dt;
  co.launch = collectives::Launch::InProgram;  // inside the compiled model: no program launch
  return collectives::CollectiveRunner(trn2_system(), co).time(bytes).time_s;
}

void expect_equal_to_single_chip(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  double amax = 0;
  for (float v : want) amax = std::max(amax, std::fabs(static_cast<double>(v)));
  ASSERT_GT(amax, 0.1);  // a real signal, not zeros
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-5 * (std::fabs(want[i]) + amax)) << "element " << i;
}

class TensorParallelFunctional : public ::testing::TestWithParam<int> {};

TEST_P(TensorParallelFunctional, BlockEqualsSingleChip) {
  BlockShape b;
  b.blocks = 2;
  const OnnxModel m = transformer(b);
  const auto x = values(static_cast<size_t>(b.batch * b.seq * b.hidden), 3);
  const TpRunOutput r = run_tp(m, GetParam(), x, core::Mode::Functional);
  expect_equal_to_single_chip(r.outputs.at("out"), single_chip(m, x));
  // Megatron: one all-reduce after attention, one after the MLP, per block.
  EXPECT_EQ(r.report.all_reduces.size(), 2u * b.blocks);
  EXPECT_EQ(r.report.column_parallel.size(), 4u * b.blocks);  // q, k, v, up
  EXPECT_EQ(r.report.row_parallel.size(), 2u * b.blocks);     // o, down
  for (const auto& a : r.report.all_reduces) EXPECT_EQ(a.bytes, b.batch * b.seq * b.hidden * 4);
}

INSTANTIATE_TEST_SUITE_P(Tp, TensorParallelFunctional, ::testing::Values(2, 4));

TEST(TensorParallel, ParallelBlockOverlapsTheAttentionAllReduce) {
  BlockShape b;
  b.parallel = true;
  const OnnxModel m = transformer(b);
  const auto x = values(static_cast<size_t>(b.batch * b.seq * b.hidden), 4);
  const TpRunOutput r = run_tp(m, 2, x, core::Mode::Functional);
  expect_equal_to_single_chip(r.outputs.at("out"), single_chip(m, x));
  // The all-reduce's summation order is fixed by its schedule: a second run is bit-identical.
  EXPECT_EQ(run_tp(m, 2, x, core::Mode::Functional).outputs.at("out"), r.outputs.at("out"));
  const TpReport& t = r.report;
  ASSERT_EQ(t.all_reduces.size(), 2u);
  // The MLP does not read the attention's sum: it runs while the fabric sums. The hidden
  // communication is the overlap of each all-reduce with the kernels, recomputed here from
  // the reported intervals.
  double hidden = 0;
  for (const auto& a : t.all_reduces)
    for (const auto& o : t.ops)
      hidden += std::max(0.0, std::min(a.start_s + a.time_s, o.start_s + o.time_s) - std::max(a.start_s, o.start_s));
  EXPECT_GT(hidden, 0.1 * t.all_reduces[0].time_s);
  EXPECT_NEAR(t.communication_time_s - t.exposed_communication_time_s, hidden, 1e-12);
  EXPECT_NEAR(t.time_s, t.compute_time_s + t.exposed_communication_time_s, 1e-12);
}

TEST(TensorParallel, TimingSharesAndSequentialDependency) {
  BlockShape b;
  const OnnxModel m = transformer(b);
  const TpReport t = run_tp(m, 4, {}, core::Mode::Timing).report;
  EXPECT_EQ(t.mode, "timing");
  ASSERT_EQ(t.all_reduces.size(), 2u);
  EXPECT_GT(t.communication_share, 0.0);
  EXPECT_LT(t.communication_share, 1.0);
  // Attention then MLP: everything after each all-reduce reads its sum, nothing overlaps.
  EXPECT_NEAR(t.exposed_communication_time_s, t.communication_time_s, 1e-12);
  EXPECT_NEAR(t.time_s, t.compute_time_s + t.communication_time_s, 1e-12);
  // The all-reduce time is the collective layer's own (in-program) for those bytes on 4 logical
  // cores (one trn2 chip at LNC=2).
  collectives::CollectiveOptions co;
  co.ranks = 4;
  co.ranks_per_chip = 4;
  co.launch = collectives::Launch::InProgram;
  collectives::CollectiveRunner cr(trn2_system(), co);
  EXPECT_DOUBLE_EQ(t.all_reduces[0].time_s, cr.time(t.all_reduces[0].bytes).time_s);
  // The per-rank compute is smaller than one logical core's (the MatMuls are split).
  compiler::CompileOptions one_lnc;
  one_lnc.cores = hw::default_lnc(trn2_system().chip);
  one_lnc.fuse_qkv = false;  // as the tensor-parallel compile (its projections split by heads)
  auto cm = compiler::compile(compiler::import_onnx_bytes(m.bytes()), trn2_system().chip, one_lnc);
  // Both node by node (the tensor-parallel runtime schedules its kernels itself, without overlap).
  const Report single = LoadedModel(cm, trn2_system().chip, /*overlap=*/false).run({}, core::Mode::Timing).report;
  double single_mm = 0, tp_mm = 0;
  for (const auto& o : single.ops) if (o.op == "MatMul") single_mm += o.time_s;
  for (const auto& o : t.ops) if (o.op == "MatMul") tp_mm += o.time_s;
  EXPECT_LT(tp_mm, single_mm);
}

TEST(TensorParallel, GemmMlpSplitsIntoOneAllReduce) {
  // Gemm (transB = 1, with bias) -> Relu -> Gemm: decomposed to MatMul + Add with folded weight
  // transposes, then split column/row as any MatMul pair.
  OnnxModel m;
  m.input("x", {8, 32});
  m.floats("w1", {64, 32}, values(64 * 32, 21)).floats("b1", {64}, values(64, 22));
  m.floats("w2", {32, 64}, values(32 * 64, 23)).floats("b2", {32}, values(32, 24));
  OnnxModel::attr(m.node("Gemm", {"x", "w1", "b1"}, {"h"}, "fc1"), "transB", int64_t{1});
  m.node("Relu", {"h"}, {"r"}, "relu");
  OnnxModel::attr(m.node("Gemm", {"r", "w2", "b2"}, {"out"}, "fc2"), "transB", int64_t{1});
  m.output("out");
  const auto x = values(8 * 32, 25);
  for (int tp : {1, 2, 4}) {
    const TpRunOutput r = run_tp(m, tp, x, core::Mode::Functional);
    expect_equal_to_single_chip(r.outputs.at("out"), single_chip(m, x));
    ASSERT_EQ(r.report.all_reduces.size(), 1u);
    if (tp == 1) EXPECT_EQ(r.report.communication_time_s, 0.0);  // one chip: nothing to send
    else EXPECT_GT(r.report.communication_time_s, 0.0);
  }
}

TEST(TensorParallel, HeadsThatDoNotDivideAreAShapeError) {
  BlockShape b;
  b.heads = 2;  // hidden 32 divides by 4, the 2 heads do not
  try {
    run_tp(transformer(b), 4, {}, core::Mode::Timing);
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("Reshape"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tp=4"), std::string::npos) << e.what();
  }
  b.heads = 4;
  try {
    run_tp(transformer(b), 3, {}, core::Mode::Timing);  // 32 columns over 3 chips
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("does not divide by tp=3"), std::string::npos) << e.what();
  }
}

TEST(TensorParallel, NoPairIsUnsupportedAndTooManyChipsAConfigError) {
  // A MatMul whose columns a Softmax normalises together: neither row-parallel nor gatherable.
  OnnxModel m;
  m.input("x", {4, 16});
  m.floats("w", {16, 8}, values(128, 1));
  m.node("MatMul", {"x", "w"}, {"y"}, "proj");
  OnnxModel::attr(m.node("Softmax", {"y"}, {"out"}, "softmax"), "axis", int64_t{-1});
  m.output("out");
  try {
    run_tp(m, 2, {}, core::Mode::Timing);
    FAIL() << "expected UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("normalises over the split axis"), std::string::npos) << e.what();
  }
  try {
    run_tp(transformer(BlockShape{}), 65, {}, core::Mode::Timing);  // trn2.48xlarge: 16 chips x 4 logical cores
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("65 logical NeuronCores"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("has 64"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("16 chips"), std::string::npos) << e.what();
  }
}

// Vocabulary-parallel LM head: the logits MatMul is split by columns and its blocks all-gathered
// (one all-gather of the whole logits, timed as the collective layer times an all-gather of
// those bytes); the logits equal the single chip's within fp32 round-off as above.
class VocabParallel : public ::testing::TestWithParam<int> {};

TEST_P(VocabParallel, LmHeadIsSplitAndGathered) {
  BlockShape b;
  b.vocab = 48;
  const OnnxModel m = transformer(b);
  const auto x = values(static_cast<size_t>(b.batch * b.seq * b.hidden), 5);
  const int tp = GetParam();
  const TpRunOutput r = run_tp(m, tp, x, core::Mode::Functional);
  expect_equal_to_single_chip(r.outputs.at("logits"), single_chip(m, x, "logits"));
  const TpReport& t = r.report;
  EXPECT_EQ(t.vocab_parallel, std::vector<std::string>{"lm_head"});
  EXPECT_TRUE(t.notes.empty()) << t.notes.front();
  ASSERT_EQ(t.all_gathers.size(), 1u);
  EXPECT_EQ(t.all_reduces.size(), 2u);
  const TpAllReduceTime& g = t.all_gathers[0];
  EXPECT_EQ(g.op, "all-gather");
  EXPECT_EQ(g.tensor, "logits");
  EXPECT_EQ(g.bytes, b.batch * b.seq * b.vocab * 4);
  EXPECT_DOUBLE_EQ(g.time_s, collective_time(collectives::Op::AllGather, tp, g.bytes));
  // The gather is the last thing: it starts when the LM head's kernel ends and ends the run.
  EXPECT_NEAR(g.start_s, t.ops.back().start_s + t.ops.back().time_s, 1e-15);
  EXPECT_NEAR(t.time_s, g.start_s + g.time_s, 1e-15);
  double comm = 0;
  for (const auto* v : {&t.all_reduces, &t.all_gathers})
    for (const auto& a : *v) comm += a.time_s;
  EXPECT_NEAR(t.communication_time_s, comm, 1e-15);
}

INSTANTIATE_TEST_SUITE_P(Tp, VocabParallel, ::testing::Values(2, 4));

TEST(VocabParallel, VocabularyThatDoesNotDivideStaysReplicated) {
  BlockShape b;
  b.vocab = 30;  // 30 columns over 4 chips
  const OnnxModel m = transformer(b);
  const auto x = values(static_cast<size_t>(b.batch * b.seq * b.hidden), 6);
  const TpRunOutput r = run_tp(m, 4, x, core::Mode::Functional);
  expect_equal_to_single_chip(r.outputs.at("logits"), single_chip(m, x, "logits"));
  EXPECT_TRUE(r.report.all_gathers.empty());
  EXPECT_TRUE(r.report.vocab_parallel.empty());
  ASSERT_EQ(r.report.notes.size(), 1u);
  EXPECT_NE(r.report.notes[0].find("does not divide by tp=4"), std::string::npos) << r.report.notes[0];
}

// All-reduce dtype: the collectives move what the HBM holds. An fp32 model under the bf16
// policy keeps fp32 activations (4-byte all-reduce, as the FP32 test above); a model whose
// activations are bf16 (Cast to bf16 before the MLP) all-reduces bf16: half the bytes, the
// time of that size, and each rank's partial and the sum rounded to bf16. Tolerance against
// the single chip (which rounds the unsplit MatMul's result once): three bf16 roundings of
// values no larger than the partials, |tp - single| <= 2^-7 (|single| + max|single|).
TEST(TensorParallel, AllReduceInTheActivationsDType) {
  BlockShape b;
  const TpReport fp32_acts = run_tp(transformer(b), 2, {}, core::Mode::Timing, false, compiler::DTypePolicy::BF16).report;
  for (const auto& a : fp32_acts.all_reduces) {
    EXPECT_EQ(a.bytes, b.batch * b.seq * b.hidden * 4);
    EXPECT_EQ(a.dtype, "fp32");
  }
  OnnxModel m;
  m.input("x", {8, 32});
  m.floats("w1", {32, 64}, values(32 * 64, 31)).floats("w2", {64, 32}, values(64 * 32, 32));
  OnnxModel::attr(m.node("Cast", {"x"}, {"xh"}, "to_bf16"), "to", int64_t{16});
  m.node("MatMul", {"xh", "w1"}, {"h"}, "fc1");
  m.node("Relu", {"h"}, {"r"}, "relu");
  m.node("MatMul", {"r", "w2"}, {"y"}, "fc2");
  OnnxModel::attr(m.node("Cast", {"y"}, {"out"}, "to_fp32"), "to", int64_t{1});
  m.output("out");
  const auto x = values(8 * 32, 33);
  const TpRunOutput r = run_tp(m, 4, x, core::Mode::Functional);
  ASSERT_EQ(r.report.all_reduces.size(), 1u);
  const TpAllReduceTime& a = r.report.all_reduces[0];
  EXPECT_EQ(a.dtype, "bf16");
  EXPECT_EQ(a.bytes, 8 * 32 * 2);
  EXPECT_DOUBLE_EQ(a.time_s, collective_time(collectives::Op::AllReduce, 4, a.bytes, numerics::DType::BF16));
  const auto want = single_chip(m, x);
  const auto& got = r.outputs.at("out");
  ASSERT_EQ(got.size(), want.size());
  double amax = 0;
  for (float v : want) amax = std::max(amax, std::fabs(static_cast<double>(v)));
  ASSERT_GT(amax, 0.1);
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], std::ldexp(1.0, -7) * (std::fabs(want[i]) + amax)) << "element " << i;
    // The sum was rounded to bf16: the low 16 bits of its fp32 pattern are zero.
    uint32_t bits = 0;
    std::memcpy(&bits, &got[i], 4);
    ASSERT_EQ(bits & 0xFFFFu, 0u) << "element " << i;
  }
}

// --trace: rank 0's instructions sit inside their kernels' intervals on the plan's timeline,
// the kernels track has one slice per kernel and the collectives track one per collective at
// the reported start and duration.
TEST(TensorParallel, TraceShowsKernelsAndCollectives) {
  BlockShape b;
  b.parallel = true;
  b.vocab = 16;
  const TpReport t = run_tp(transformer(b), 2, {}, core::Mode::Timing, true).report;
  ASSERT_FALSE(t.timeline.empty());
  std::map<std::string, const TpOp*> kernel;
  for (const auto& o : t.ops) kernel[o.node] = &o;
  for (const auto& e : t.timeline) {
    const TpOp* k = kernel.at(e.op_node);
    ASSERT_GE(e.start_s, k->start_s - 1e-12) << e.op_node;
    ASSERT_LE(e.end_s, k->start_s + k->time_s + 1e-12) << e.op_node;
  }
  std::ostringstream os;
  write_tp_trace(os, t);
  const auto j = nlohmann::json::parse(os.str());
  int coll_pid = -1, kern_pid = -1;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") {
      if (e["args"]["name"] == "collectives") coll_pid = e["pid"];
      if (e["args"]["name"] == "rank 0 kernels") kern_pid = e["pid"];
    }
  ASSERT_GE(coll_pid, 0);
  ASSERT_GE(kern_pid, 0);
  std::vector<std::pair<double, double>> colls;
  size_t kernels = 0, instructions = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["pid"] == coll_pid) colls.emplace_back(e["ts"].get<double>(), e["dur"].get<double>());
    else if (e["pid"] == kern_pid) ++kernels;
    else ++instructions;
  }
  EXPECT_EQ(kernels, t.ops.size());
  EXPECT_EQ(instructions, t.timeline.size());
  ASSERT_EQ(colls.size(), t.all_reduces.size() + t.all_gathers.size());
  ASSERT_EQ(colls.size(), 3u);  // two all-reduces and the logits' all-gather
  for (size_t i = 0; i < t.all_reduces.size(); ++i) {
    EXPECT_NEAR(colls[i].first, t.all_reduces[i].start_s * 1e6, 1e-9);
    EXPECT_NEAR(colls[i].second, t.all_reduces[i].time_s * 1e6, 1e-9);
  }
}

}  // namespace
}  // namespace trnsim::runtime
