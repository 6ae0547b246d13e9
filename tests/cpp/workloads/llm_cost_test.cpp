// The analytical LLM cost model against its references: interpolated node costs against a
// direct timing-mode run of the same shape (within 5%), memory per core against closed forms,
// the disk cache, the layout's errors, and decode against the HBM roofline.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "trnsim/common/error.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/workloads/llm_cost.h"
#include "trnsim/workloads/llm_generation.h"

using namespace trnsim;
using namespace trnsim::workloads;

namespace {

NodeCosts costs(const hw::ChipSpec& chip, int cores = 1) {
  NodeCostOptions o;
  o.cores = cores;
  o.use_disk_cache = false;
  return NodeCosts(chip, o);
}

Deployment deployment(const std::string& system, int tp) {
  Deployment d;
  d.system = system;
  d.tp = tp;
  return d;
}

}  // namespace

TEST(LlmNodeCosts, MatmulInterpolationWithinFivePercentOfTimingMode) {
  const auto chip = hw::load_chip("trn1");
  auto nc = costs(chip);
  // Off-grid token counts of decode (a few sequences) and prefill (hundreds to thousands).
  for (int64_t m : {3, 24, 100, 200, 700, 1500, 3000}) {
    const double analytical = nc.matmul_s(m, 1024, 768), timing = nc.measure_matmul_s(m, 1024, 768);
    EXPECT_NEAR(analytical / timing, 1.0, 0.05) << "m=" << m;
  }
}

TEST(LlmNodeCosts, AttentionInterpolationWithinFivePercentOfTimingMode) {
  const auto chip = hw::load_chip("trn1");
  auto nc = costs(chip);
  for (int64_t keys : {300, 1000, 2500}) {  // decode: 8 query rows (GQA group) per KV head
    const double analytical = nc.cross_attention_s(2, 8, keys, 128);
    EXPECT_NEAR(analytical / nc.measure_attention_s(2, 8, keys, 128, false), 1.0, 0.05) << "keys=" << keys;
  }
  for (int64_t seq : {200, 600, 1100}) {  // causal prefill
    const double analytical = nc.prefill_attention_s(2, seq, 128);
    EXPECT_NEAR(analytical / nc.measure_attention_s(2, seq, seq, 128, true), 1.0, 0.05) << "seq=" << seq;
  }
  for (int64_t m : {40, 300}) {
    const double analytical = nc.pointwise_s(m, 1024, 512, 512);
    EXPECT_NEAR(analytical / nc.measure_pointwise_s(m, 1024, 512, 512), 1.0, 0.05) << "m=" << m;
  }
}

TEST(LlmNodeCosts, DiskCacheServesTheSecondRun) {
  auto dir = std::filesystem::temp_directory_path() / "trnsim_llm_cache_test";
  std::filesystem::remove_all(dir);
  setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  const auto chip = hw::load_chip("trn1");
  NodeCostOptions o;
  double first = 0;
  {
    NodeCosts a(chip, o);
    first = a.matmul_s(100, 512, 512);
    EXPECT_EQ(a.simulations(), 2);  // the grid points either side of 100
  }
  NodeCosts b(chip, o);
  EXPECT_EQ(b.matmul_s(100, 512, 512), first);
  EXPECT_EQ(b.simulations(), 0);
  unsetenv("XDG_CACHE_HOME");
  std::filesystem::remove_all(dir);
}

TEST(LlmStepCost, MemoryPerCoreClosedForms) {
  StepCostOptions o;
  o.use_disk_cache = false;
  const ModelDesc m = load_model("llama-3.1-70b");
  TrainiumStepCost c(m, deployment("trn1.32xlarge", 32), o);
  // KV heads (8) replicated over 32 ranks: one per rank; 80 layers x (K + V) x 128 x 2 bytes.
  EXPECT_EQ(c.kv_bytes_per_token_per_core().value(), 80.0 * 2 * 128 * 2);
  // Weights: the parameters / 32 in bf16, plus the replicated KV projections (1 head of 8 per
  // rank instead of 1/4 of one): 80 x 2 x 8192 x 128 x (1 - 1/4) elements more.
  const double split = static_cast<double>(m.parameters()) * 2 / 32;
  const double replicated_kv = 80.0 * 2 * 8192 * 128 * (1 - 8.0 / 32) * 2;
  EXPECT_NEAR(c.weight_bytes_per_core().value() / (split + replicated_kv), 1.0, 0.002);
  EXPECT_EQ(c.hbm_bytes_per_core().value(), 16.0 * (1LL << 30));  // trn1: 32 GiB over 2 cores
  EXPECT_EQ(c.chips(), 16);
}

TEST(LlmStepCost, DoesNotFitIsAClearError) {
  try {
    TrainiumStepCost c(load_model("llama-3.1-405b"), deployment("trn2.48xlarge", 8));
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("llama-3.1-405b bf16 needs"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("trn2 has 96"), std::string::npos) << e.what();
  }
  EXPECT_THROW(TrainiumStepCost(load_model("llama-3-8b"), deployment("trn1.32xlarge", 64)), ShapeError);
  Deployment ep = deployment("trn1.32xlarge", 8);
  ep.ep = 2;
  EXPECT_THROW(TrainiumStepCost(load_model("llama-3-8b"), ep), ConfigError);  // a dense model
}

TEST(LlmStepCost, DecodeRespectsTheHbmRooflineAndGrowsWithContext) {
  StepCostOptions o;
  o.use_disk_cache = false;
  TrainiumStepCost c(load_model("llama-3-8b"), deployment("trn1.32xlarge", 8), o);
  StepBatch short_ctx, long_ctx;
  short_ctx.decode_contexts = {128};
  long_ctx.decode_contexts = {4000};
  const StepCost s = c.step(short_ctx), l = c.step(long_ctx);
  // A decode step reads every weight of the rank once: never faster than HBM allows.
  const double roofline_s = c.weight_bytes_per_core().value() / (hw::load_chip("trn1").hbm.bandwidth.value() * 1e9 / 2);
  EXPECT_GT(to_seconds(s.time), roofline_s);
  EXPECT_GT(l.attention.value(), s.attention.value() * 4);
  EXPECT_NEAR(s.time.value(), s.matmul.value() + s.attention.value() + s.collective.value() + s.other.value(), 1e-6 * s.time.value());
}

TEST(LlmStepCost, MoeDecodeReadsOnlyTheRoutedExperts) {
  StepCostOptions o;
  o.use_disk_cache = false;
  const ModelDesc m = load_model("mixtral-8x7b");
  TrainiumStepCost c(m, deployment("trn1.32xlarge", 16), o);
  StepBatch one;
  one.decode_contexts = {256};
  // One token routes to top-2 of 8 experts: the expert node is 2 x one expert's two matmuls.
  for (const auto& n : c.nodes(one))
    if (n.name.find("experts (") != std::string::npos) {
      const auto& l = c.layout();
      const double one_expert =
          c.node_costs().matmul_s(1, m.hidden, 2 * l.expert_ffn) + c.node_costs().matmul_s(1, l.expert_ffn, m.hidden);
      EXPECT_NEAR(n.seconds / one_expert, 2.0, 1e-9);
    }
}
