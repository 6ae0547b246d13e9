// Parameter and FLOP counts against published figures.
#include <gtest/gtest.h>

#include "fake_step_cost.h"
#include "trnsim/workloads/train_model_stats.h"

namespace trnsim::workloads {
namespace {

TEST(TrainModelStats, ParameterCountsMatchPublishedSizes) {
  // Llama-2-7B: 6,738,415,616 parameters (the Hugging Face checkpoint).
  EXPECT_NEAR(model_stats(testing::llama2_7b()).total, 6'738'415'616.0, 1e3);
  // GPT-3 175B: "175B" (Brown et al. 2020); biases excluded here, 174.6B.
  EXPECT_NEAR(model_stats(testing::gpt3_175b()).total / 175e9, 1.0, 0.01);
  // Llama-2-70B: 68,976,648,192.
  EXPECT_NEAR(model_stats(testing::llama2_70b()).total, 68'976'648'192.0, 1e3);
}

TEST(TrainModelStats, FlopsPerTokenIsSixNPlusAttention) {
  const ModelDesc m = testing::gpt3_175b();
  const double n = model_stats(m).non_embedding_active;
  EXPECT_NEAR(train_flops_per_token(m, 2048), 6 * n + 12.0 * 96 * 12288 * 2048, 1.0);
}

TEST(TrainModelStats, RecomputeKeepsLess) {
  const ModelDesc m = testing::llama2_7b();
  const double none = activation_bytes_per_token_per_layer(m, Recompute::None, 1, 2);
  const double sel = activation_bytes_per_token_per_layer(m, Recompute::Selective, 1, 2);
  const double full = activation_bytes_per_token_per_layer(m, Recompute::Full, 1, 2);
  EXPECT_GT(none, sel);
  EXPECT_GT(sel, full);
  EXPECT_DOUBLE_EQ(full, 2.0 * 4096);
  EXPECT_DOUBLE_EQ(activation_bytes_per_token_per_layer(m, Recompute::None, 8, 2), none / 8);
}

}  // namespace
}  // namespace trnsim::workloads

namespace trnsim::workloads {
namespace {

// The training split of the weights adds up to the llm layer's exact count (which includes
// biases and small tensors this split leaves out) for every preset, within 0.5%.
TEST(TrainModelStats, SplitAgreesWithTheExactCountOfEveryPreset) {
  for (const std::string& name : model_preset_names()) {
    const ModelDesc m = load_model(name);
    EXPECT_NEAR(model_stats(m).total / double(m.parameters()), 1.0, 0.005) << name;
    EXPECT_NEAR(model_stats(m).active / double(m.active_parameters()), 1.0, 0.005) << name;
  }
}

}  // namespace
}  // namespace trnsim::workloads
