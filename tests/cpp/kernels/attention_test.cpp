// Flash attention against the double reference (fp32: 2e-5 + 1e-4 relative; bf16: 1e-2
// absolute, P and the output are rounded to bf16), causal and not, over partial query tiles
// and key blocks, plus two properties: causal row 0 sees only key 0 (its output is v[0]), and
// head_dim > 128 is a ShapeError naming the limit.
#include "library_kernel_check.h"
#include "trnsim/kernels/attention.h"

namespace trnsim::kernels {
namespace {
using testing::run_checked;

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

TEST(AttentionKernel, SequenceTooLongForSbufNamesTheLimit) {
  auto chip = hw::load_chip("trn1");
  try {
    find_kernel("attention").build(chip, resolve_args(find_kernel("attention"), {{"seq", "200000"}}, "fp32"));
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("seq <="), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trnsim::kernels
