// Parameter counts of the presets against the totals their publishers state (model cards,
// papers), within 1%; KV-cache size against the closed form; loader errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "trnsim/common/error.h"
#include "trnsim/workloads/model_desc.h"

using namespace trnsim;
using namespace trnsim::workloads;

namespace {

void expect_within(double got, double want, double tol, const std::string& what) {
  EXPECT_NEAR(got / want, 1.0, tol) << what << ": " << got / 1e9 << " B vs published " << want / 1e9 << " B";
}

}  // namespace

TEST(ModelDesc, PublishedParameterCounts) {
  struct Row {
    const char* name;
    double total, active;  // active 0: dense (== total)
  };
  // Sources: Meta's Llama model cards (Llama-2 paper: 7B 6.74, 13B 13.0, 70B 69.0; Llama-3.1:
  // 8.03, 70.6, 405.9), Mistral's Mixtral announcement (46.7 / 12.9; 8x22B 141 / 39), Qwen3
  // model cards (8.2, 32.8, 30.5 / 3.3, 235 / 22), DeepSeek-V3 report (671 / 37), OpenAI's
  // gpt-oss model card (116.8), BERT paper (110 M, 340 M).
  const Row rows[] = {{"llama-2-7b", 6.74e9, 0},         {"llama-2-13b", 13.0e9, 0},
                      {"llama-2-70b", 69.0e9, 0},        {"llama-3-8b", 8.03e9, 0},
                      {"llama-3.1-8b", 8.03e9, 0},       {"llama-3.1-70b", 70.6e9, 0},
                      {"llama-3.3-70b", 70.6e9, 0},      {"llama-3.1-405b", 405.9e9, 0},
                      {"mistral-7b", 7.24e9, 0},         {"mixtral-8x7b", 46.7e9, 12.9e9},
                      {"mixtral-8x22b", 141e9, 39e9},    {"qwen3-8b", 8.2e9, 0},
                      {"qwen3-32b", 32.8e9, 0},          {"qwen3-30b-a3b", 30.5e9, 3.3e9},
                      {"qwen3-235b-a22b", 235e9, 22e9},  {"deepseek-v3", 671e9, 37e9},
                      {"gpt-oss-120b", 116.8e9, 0},      {"bert-base", 110e6, 0},
                      {"bert-large", 335e6, 0}};
  for (const auto& r : rows) {
    ModelDesc m = load_model(r.name);
    // Published figures are rounded to 2-3 digits: 1% for the precise ones, 2% for "235B"-style.
    const double tol = r.total >= 100e9 && r.total != 405.9e9 && r.total != 116.8e9 ? 0.02 : 0.01;
    expect_within(static_cast<double>(m.parameters()), r.total, tol, std::string(r.name) + " total");
    if (r.active > 0) expect_within(static_cast<double>(m.active_parameters()), r.active, 0.03, std::string(r.name) + " active");
    else if (m.moe.experts == 0) EXPECT_EQ(m.parameters(), m.active_parameters()) << r.name;
  }
}

TEST(ModelDesc, KvElementsPerToken) {
  // Llama-3.1-70B: 80 layers x (K + V) x 8 KV heads x 128 = 163,840 elements (320 KiB in bf16).
  EXPECT_EQ(load_model("llama-3.1-70b").kv_elements_per_token(), 80 * 2 * 8 * 128);
  // DeepSeek-V3 MLA: 61 layers x (512 latent + 64 rope key) = 35,136 (about 70 KB in bf16).
  EXPECT_EQ(load_model("deepseek-v3").kv_elements_per_token(), 61 * (512 + 64));
  ModelDesc g = load_model("gpt-oss-120b");
  EXPECT_TRUE(g.layer_is_sliding(0));
  EXPECT_FALSE(g.layer_is_sliding(1));
  ModelDesc d = load_model("deepseek-v3");
  EXPECT_FALSE(d.layer_is_moe(2));
  EXPECT_TRUE(d.layer_is_moe(3));
}

TEST(ModelDesc, UserConfigAndErrors) {
  auto dir = std::filesystem::temp_directory_path() / "trnsim_model_desc_test";
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  std::string ok = write("tiny.json", R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100})");
  ModelDesc m = load_model(ok);
  EXPECT_EQ(m.name, "tiny");
  // Closed form: 2 x 100 x 64 embeddings + 64 final norm + 2 layers x (q 64x64 + k,v 2 x 64x32
  // + o 64x64 + 3 x 64x128 + 2 x 64 norms).
  EXPECT_EQ(m.parameters(), 2 * 100 * 64 + 64 + 2 * (64 * 64 + 2 * 64 * 32 + 64 * 64 + 3 * 64 * 128 + 128));
  std::string missing = write("missing.json", R"({"model_type": "llama", "hidden_size": 64})");
  try {
    load_model(missing);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.json: field 'num_hidden_layers'"), std::string::npos) << e.what();
  }
  std::string family = write("family.json", R"({"model_type": "t5", "hidden_size": 64})");
  EXPECT_THROW(load_model(family), ConfigError);
  std::string bad = write("bad.json", R"({"model_type": "llama", "hidden_size": "big"})");
  EXPECT_THROW(load_model(bad), ConfigError);
  EXPECT_THROW(load_model("no-such-model"), ConfigError);
}
