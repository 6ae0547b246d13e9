// The training forward's kernel costs: a large matmul near TensorE's clock-derived peak (the
// kernel library's calibration: 91.6% at 4096x8192x8192), rows and heads beyond the measured
// ones scaling linearly, a layer's matmul time bounded below by its FLOPs at peak.
#include <gtest/gtest.h>

#include "fake_step_cost.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/workloads/train_kernel_cost.h"

namespace trnsim::workloads {
namespace {

TEST(TrainKernelCost, LargeMatmulRunsNearPeak) {
  const hw::ChipSpec chip = hw::load_chip("trn1");
  TrainKernelCosts c(chip, 1, "bf16");
  const double peak = chip.clock_derived_tflops(numerics::DType::BF16).value() * 1e12 / chip.neuron_cores;
  const double ideal = 2.0 * 2048 * 8192 * 8192 / peak;
  const double t = c.matmul_s(2048, 8192, 8192);
  EXPECT_GT(ideal / t, 0.8);
  EXPECT_LE(ideal / t, 1.0);
  // Past 2,048 rows a matmul is whole blocks of the same work: linear.
  EXPECT_DOUBLE_EQ(c.matmul_s(8192, 8192, 8192), 4 * t);
}

TEST(TrainKernelCost, LayerMatmulsAreNoFasterThanTheirFlopsAtPeak) {
  const hw::ChipSpec chip = hw::load_chip("trn1");
  TrainKernelCosts c(chip, 1, "bf16");
  const ModelDesc m = testing::llama2_7b();
  const TrainKernelLayers k = train_kernel_layers(m, 1, 4096, 1, 8, c);
  const double peak = chip.clock_derived_tflops(numerics::DType::BF16).value() * 1e12 / chip.neuron_cores;
  const double flops = 2.0 * 4096 * (4.0 * 4096 * 4096 + 3.0 * 4096 * 11008) / 8;
  EXPECT_GT(k.dense_layer.matmul.s, flops / peak);
  EXPECT_LT(k.dense_layer.matmul.s, 2.0 * flops / peak);  // tiles padded, small n: not far off
  EXPECT_GT(k.dense_layer.attention.s, 0.0);
  EXPECT_GT(k.dense_layer.other.s, 0.0);
  EXPECT_GT(k.ends.matmul.s, 2.0 * 4096 * 4096 * 4000 / peak);  // every token's logits
}

}  // namespace
}  // namespace trnsim::workloads
