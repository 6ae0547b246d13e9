// The fused element-wise program of a decoder layer against closed forms: one HBM pass (each
// input read once, each output written once), all lanes used by a few decode tokens, and the
// int8-weight matmul streaming fewer bytes than bf16 (never slower).
#include <gtest/gtest.h>

#include "trnsim/core/run.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/workloads/llm_cost.h"
#include "trnsim/workloads/llm_fused_pointwise.h"

using namespace trnsim;
using namespace trnsim::workloads;

namespace {
core::RunResult run(const isa::Program& p, const hw::ChipSpec& chip) {
  core::RunOptions ro;
  ro.mode = core::Mode::Timing;
  ro.record_instructions = false;
  ro.validate = false;
  return core::run(p, chip, {}, ro);
}
}  // namespace

TEST(LlmFusedPointwise, OneHbmPassOverTheLayersTensors) {
  const auto chip = hw::load_chip("trn1");
  for (int64_t m : {1, 8, 200}) {
    const int64_t h = 4096, i = 896, qk = 512;  // one row fits half of SBUF: 128-row tiles
    const auto r = run(fused_pointwise_program(chip, 1, m, h, i, qk, false), chip);
    // bf16: x, attn_out, ffn_out in + norm1, h1, norm2, h2 out on [m, h]; q, cos, q_rot, sin
    // in + one out on [m, qk]; gate, up in + one out on [m, i]; gamma (once per row of the
    // first tile's partitions) and the 128 x 128 group-sum matrix when a row is split.
    const double rows = std::min<int64_t>(m, 128);
    const double split = m < 128 ? 128.0 * 128 * 2 : 0;
    const double want = 2.0 * (7 * m * h + 5 * m * qk + 3 * m * i) + 2.0 * h * rows + split;
    EXPECT_NEAR(r.hbm_bytes / want, 1.0, 0.02) << "m=" << m;
  }
}

TEST(LlmFusedPointwise, ADecodeTokenTakesMicrosecondsNotAKernelPerOp) {
  // One token of Llama-2-70B at TP 32: 7 x 16 KiB + small tensors. At the core's 272 GB/s
  // the bytes take ~0.5 us; the DMA fixed costs (1.3 us each, several groups deep) dominate.
  // Nine separately launched kernels took ~100 us; fused it is a few DMA round trips.
  const auto chip = hw::load_chip("trn1");
  const double s = run(fused_pointwise_program(chip, 1, 1, 8192, 896, 512, false), chip).total.ms() * 1e-3;
  EXPECT_GT(s, 2e-6);
  EXPECT_LT(s, 15e-6);
}

TEST(LlmStepCost, Int8WeightsStreamOneBytePerWeight) {
  // Same model and step: 1-byte weights move half the weight bytes, so a decode step's matmuls
  // are faster than bf16's but not below half (the DMA fixed costs stay).
  Deployment d;
  d.system = "trn1.32xlarge";
  d.tp = 32;
  const auto model = load_model("llama-3-8b");
  StepCostOptions o;
  o.use_disk_cache = false;
  TrainiumStepCost bf16(model, d, o);
  d.weights = "int8";
  TrainiumStepCost int8(model, d, o);
  StepBatch b;
  b.decode_contexts = {512};
  const double t16 = bf16.step(b).matmul.value(), t8 = int8.step(b).matmul.value();
  EXPECT_LT(t8, 0.95 * t16);
  EXPECT_GT(t8, 0.5 * t16);
}
