// Flash attention against the double reference (fp32: 2e-5 + 1e-4 relative; bf16: 1e-2
// absolute, P and the output are rounded to bf16), causal and not, over partial query tiles
// and key blocks, plus two properties: causal row 0 sees only key 0 (its output is v[0]), and
// head_dim > 128 is a ShapeError naming the limit.
// The general form (AttentionSpec): additive masks (a [batch,1,1,seq] key-padding mask
// broadcast over heads and rows, a [seq,seq] causal mask broadcast over heads), strided
// operands (Q read from a [seq, heads, head_dim] tensor, the output written to one), and the
// split of heads across NeuronCores (bit-identical to one core, shorter in timing) -- checked
// against a double reference of softmax(scale * Q K^T + mask) V.
#include <cmath>
#include <functional>
#include <random>

#include "library_kernel_check.h"
#include "trnsim/kernels/attention.h"

namespace trnsim::kernels {
namespace {
using testing::run_checked;
using testing::run_checked_on;

TEST(AttentionKernel, Fp32NonCausal) {
  run_checked("attention", "trn2", {{"heads", "2"}, {"seq", "640"}, {"head-dim", "64"}}, "fp32");
}

TEST(AttentionKernel, Fp32CausalPartialTiles) {
  run_checked("attention", "trn2", {{"heads", "1"}, {"seq", "700"}, {"head-dim", "96"}, {"causal", "1"}}, "fp32");
}

TEST(AttentionKernel, Bf16) {
  run_checked("attention", "trn1", {{"heads", "2"}, {"seq", "512"}, {"head-dim", "128"}}, "bf16");
  run_checked("attention", "trn2", {{"heads", "1"}, {"seq", "384"}, {"head-dim", "128"}, {"causal", "1"}}, "bf16");
}

TEST(AttentionKernel, CausalFirstRowIsFirstValue) {
  auto r = run_checked("attention", "trn2", {{"heads", "1"}, {"seq", "200"}, {"head-dim", "32"}, {"causal", "1"}}, "fp32");
  const auto& out = r.result.outputs.at("out");
  const auto& v = r.inputs.at("v");
  for (int d = 0; d < 32; ++d) EXPECT_NEAR(out[d], v[d], 1e-6);
}

TEST(AttentionKernel, HeadDimOver128IsAShapeError) {
  auto chip = hw::load_chip("trn2");
  KernelBuilder kb(chip);
  std::vector<int64_t> s{1, 128, 256};
  auto q = kb.hbm_input("q", s, DType::BF16), k = kb.hbm_input("k", s, DType::BF16),
       v = kb.hbm_input("v", s, DType::BF16);
  auto o = kb.hbm_output("out", s, DType::BF16);
  try {
    attention(kb, q, k, v, o, false);
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("128"), std::string::npos) << e.what();
  }
}

TEST(AttentionKernel, KeysBeyondSbufStreamInChunks) {
  // An SBUF of 64 KiB per partition holds K^T and V of ~1,000 keys beside the working tiles: a
  // causal bf16 sequence of 1,300 streams its keys in chunks (flash attention over the
  // sequence), same reference.
  auto chip = hw::load_chip("trn1");
  chip.core.sbuf.bytes_per_partition = Bytes(64 * 1024);
  run_checked_on("attention", chip, {{"heads", "2"}, {"seq", "1300"}, {"head-dim", "128"}, {"causal", "1"}}, "bf16");
  chip.core.sbuf.bytes_per_partition = Bytes(56 * 1024);  // no causal masks: chunks of 1,024 keys
  run_checked_on("attention", chip, {{"heads", "1"}, {"seq", "1300"}, {"head-dim", "128"}}, "bf16");
}

TEST(AttentionKernel, LongContextDecodeIsLinearInKeys) {
  // 16 query rows against 50,000 and 100,000 keys (past one head's SBUF on trn1): builds, and
  // the time doubles with the keys (each key chunk is read once), within 10%.
  auto chip = hw::load_chip("trn1");
  auto time_s = [&](int64_t keys) {
    KernelBuilder kb(chip);
    AttentionSpec s;
    s.q = AttentionOperand::dense(kb.hbm_input("q", {1, 16, 128}, DType::BF16));
    s.k = AttentionOperand::dense(kb.hbm_input("k", {1, keys, 128}, DType::BF16));
    s.v = AttentionOperand::dense(kb.hbm_input("v", {1, keys, 128}, DType::BF16));
    s.out = AttentionOperand::dense(kb.hbm_output("out", {1, 16, 128}, DType::BF16));
    s.seq_q = 16, s.seq_k = keys, s.head_dim = 128;
    attention(kb, s);
    core::RunOptions ro;
    ro.mode = core::Mode::Timing;
    return core::run(kb.build(), chip, {}, ro).total.ms() * 1e-3;
  };
  const double t1 = time_s(50000), t2 = time_s(100000);
  EXPECT_NEAR(t2 / t1, 2.0, 0.2) << t1 << " s, " << t2 << " s";
}

// ---- the general form: masks, strides, cores

// Inputs and a double reference for B x H heads of [S, D], Q and the output in [B, S, H, D]
// layout (so their operands are strided), K and V [B*H, S, D], a mask operand given by the test.
struct MaskedCase {
  int64_t b = 2, h = 3, s = 160, d = 32;
  float scale = 0.125f;
  std::vector<float> q, k, v, mask;
  std::vector<int64_t> mask_shape;  // the mask tensor's elements, as a 1-D tensor
  // mask(bi, hi, i, j) -> value read from `mask`
  std::function<float(int64_t, int64_t, int64_t, int64_t)> mask_at;
};

std::vector<float> random_vec(size_t n, uint64_t seed, float lo = -1, float hi = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// out[bi, i, hi, :] in [B, S, H, D] layout.
std::vector<double> reference(const MaskedCase& c) {
  std::vector<double> out(static_cast<size_t>(c.b * c.s * c.h * c.d), 0.0), sc(static_cast<size_t>(c.s));
  for (int64_t bi = 0; bi < c.b; ++bi)
    for (int64_t hi = 0; hi < c.h; ++hi) {
      const int64_t kv = (bi * c.h + hi) * c.s * c.d;
      for (int64_t i = 0; i < c.s; ++i) {
        double m = -INFINITY, l = 0;
        for (int64_t j = 0; j < c.s; ++j) {
          double dot = 0;
          for (int64_t x = 0; x < c.d; ++x)
            dot += double(c.q[((bi * c.s + i) * c.h + hi) * c.d + x]) * c.k[kv + j * c.d + x];
          sc[j] = c.scale * dot + c.mask_at(bi, hi, i, j);
          m = std::max(m, sc[j]);
        }
        for (int64_t j = 0; j < c.s; ++j) l += (sc[j] = std::exp(sc[j] - m));
        for (int64_t j = 0; j < c.s; ++j)
          for (int64_t x = 0; x < c.d; ++x)
            out[((bi * c.s + i) * c.h + hi) * c.d + x] += sc[j] / l * c.v[kv + j * c.d + x];
      }
    }
  return out;
}

struct MaskedRun {
  std::vector<float> out;
  double time_s = 0;
};

// Builds the kernel over `cores` cores (heads split evenly) and runs it.
MaskedRun run_masked(const MaskedCase& c, AttentionOperand mask_op, int cores, DType dt, bool causal = false,
                     core::Mode mode = core::Mode::Functional) {
  auto chip = hw::load_chip("trn2");
  KernelBuilder kb(chip, BuilderOptions{.cores = cores, .dma_queues = 16});
  const int64_t heads = c.b * c.h;
  auto q = kb.hbm_input("q", {c.b * c.s * c.h * c.d}, DType::F32);
  auto k = kb.hbm_input("k", {heads, c.s, c.d}, DType::F32);
  auto v = kb.hbm_input("v", {heads, c.s, c.d}, DType::F32);
  auto m = kb.hbm_input("mask", {static_cast<int64_t>(c.mask.size())}, DType::F32);
  auto o = kb.hbm_output("out", {c.b * c.s * c.h * c.d}, DType::F32);
  AttentionSpec s;
  auto bshd = [&](const Tensor& t) {  // [B, S, H, D] read as heads (B, H) of [S, D]
    AttentionOperand a;
    a.tensor = t;
    a.head_shape = {c.b, c.h};
    a.head_strides = {c.s * c.h * c.d, c.d};
    a.row_stride = c.h * c.d;
    a.col_stride = 1;
    return a;
  };
  s.q = bshd(q);
  s.out = bshd(o);
  s.k = AttentionOperand::dense(k);
  s.v = AttentionOperand::dense(v);
  mask_op.tensor = m;
  s.mask = mask_op;
  s.heads = heads;
  s.seq_q = s.seq_k = c.s;
  s.head_dim = c.d;
  s.scale = c.scale;
  s.causal = causal;
  s.dtype = dt;
  for (int core = 0; core < cores; ++core) {
    kb.set_core(core);
    s.head_begin = core * heads / cores;
    s.head_end = (core + 1) * heads / cores;
    attention(kb, s);
  }
  auto p = kb.build();
  core::RunOptions ro;
  ro.mode = mode;
  std::map<std::string, std::vector<float>> in{{"q", c.q}, {"k", c.k}, {"v", c.v}, {"mask", c.mask}};
  auto r = core::run(p, chip, mode == core::Mode::Functional ? in : std::map<std::string, std::vector<float>>{}, ro);
  MaskedRun out;
  if (mode == core::Mode::Functional) out.out = r.outputs.at("out");
  out.time_s = r.total.ms() * 1e-3;
  return out;
}

MaskedCase base_case() {
  MaskedCase c;
  const int64_t n = c.b * c.s * c.h * c.d;
  c.q = random_vec(static_cast<size_t>(n), 11);
  c.k = random_vec(static_cast<size_t>(n), 12);
  c.v = random_vec(static_cast<size_t>(n), 13);
  return c;
}

// Key-padding mask [B, 1, 1, S]: batch 0 sees every key, batch 1 only the first 100 (BERT's
// attention_mask, the padded keys at the minimum float).
MaskedCase padding_case(AttentionOperand& op) {
  MaskedCase c = base_case();
  c.mask.assign(static_cast<size_t>(c.b * c.s), 0.0f);
  for (int64_t j = 100; j < c.s; ++j) c.mask[static_cast<size_t>(c.s + j)] = -3.4028234663852886e38f;
  c.mask_at = [m = c.mask, s = c.s](int64_t bi, int64_t, int64_t, int64_t j) { return m[static_cast<size_t>(bi * s + j)]; };
  op.head_shape = {c.b, c.h};
  op.head_strides = {c.s, 0};
  op.row_stride = 0;
  op.col_stride = 1;
  return c;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double abs, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= abs) && bad++ < 5)
      ADD_FAILURE() << what << " out[" << i << "] = " << got[i] << ", want " << want[i];
  EXPECT_EQ(bad, 0) << what;
}

TEST(AttentionKernelMask, KeyPaddingMaskBroadcastOverHeadsAndRowsFp32) {
  AttentionOperand op;
  MaskedCase c = padding_case(op);
  auto r = run_masked(c, op, 1, DType::F32);
  expect_close(r.out, reference(c), 2e-5, "padding fp32");
}

TEST(AttentionKernelMask, CausalMaskTensorBf16MatchesCausalFlag) {
  // A [S, S] additive causal mask broadcast over all heads, in bf16 (1e-2 absolute: P and the
  // operands are rounded to bf16); and the same result through the kernel's own causal flag.
  MaskedCase c = base_case();
  c.mask.assign(static_cast<size_t>(c.s * c.s), 0.0f);
  for (int64_t i = 0; i < c.s; ++i)
    for (int64_t j = i + 1; j < c.s; ++j) c.mask[static_cast<size_t>(i * c.s + j)] = -3.4028234663852886e38f;
  c.mask_at = [m = c.mask, s = c.s](int64_t, int64_t, int64_t i, int64_t j) { return m[static_cast<size_t>(i * s + j)]; };
  AttentionOperand op;
  op.head_shape = {c.b * c.h};
  op.head_strides = {0};
  op.row_stride = c.s;
  op.col_stride = 1;
  auto want = reference(c);
  expect_close(run_masked(c, op, 1, DType::BF16).out, want, 1e-2, "causal mask bf16");
  // Mask of zeros + the causal flag: the flag's own -1e30 mask does the masking.
  MaskedCase z = c;
  std::fill(z.mask.begin(), z.mask.end(), 0.0f);
  expect_close(run_masked(z, op, 1, DType::F32, /*causal=*/true).out, want, 2e-5, "zero mask + causal flag fp32");
}

TEST(AttentionKernelMask, HeadsSplitAcrossCoresBitIdenticalAndFaster) {
  AttentionOperand op;
  MaskedCase c = padding_case(op);
  auto one = run_masked(c, op, 1, DType::BF16);
  auto four = run_masked(c, op, 4, DType::BF16);
  ASSERT_EQ(one.out.size(), four.out.size());
  for (size_t i = 0; i < one.out.size(); ++i) ASSERT_EQ(one.out[i], four.out[i]) << i;  // same arithmetic per head
  expect_close(four.out, reference(c), 1e-2, "4 cores bf16");
  const double t1 = run_masked(c, op, 1, DType::BF16, false, core::Mode::Timing).time_s;
  const double t4 = run_masked(c, op, 4, DType::BF16, false, core::Mode::Timing).time_s;
  // 6 heads on 4 cores: the busiest core has 2 heads of 6, so at best 3x; HBM and the fixed
  // costs take some of it, and one core already overlaps its heads' chains (interleaved).
  EXPECT_LT(t4, t1 / 1.6) << "1 core " << t1 << " s, 4 cores " << t4 << " s";
}

TEST(AttentionKernelMask, MaskWithWrongHeadCountIsAShapeError) {
  auto chip = hw::load_chip("trn2");
  KernelBuilder kb(chip);
  auto t = kb.hbm_input("q", {2, 128, 32}, DType::F32);
  auto o = kb.hbm_output("out", {2, 128, 32}, DType::F32);
  AttentionSpec s;
  s.q = s.k = s.v = AttentionOperand::dense(t);
  s.out = AttentionOperand::dense(o);
  s.heads = 2;
  s.seq_q = s.seq_k = 128;
  s.head_dim = 32;
  AttentionOperand m = AttentionOperand::dense(t);
  m.head_shape = {3};
  m.head_strides = {0};
  s.mask = m;
  try {
    attention(kb, s);
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("mask has 3 heads"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trnsim::kernels
