// Heads that tp does not divide. Trainium: sharded as NxD Inference does, against its head
// counts restated here (modules/attention/gqa.py: get_shardable_head_counts after
// determine_sharding_strategy). GPUs: refused as vLLM refuses them, one line naming the
// model, the heads and the tp.
#include <gtest/gtest.h>

#include <string>

#include "trnsim/common/error.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/workloads/gpu_step_cost.h"
#include "trnsim/workloads/llm_layout.h"

using namespace trnsim;
using namespace trnsim::workloads;

namespace {

// NxD's padded (attention, KV) head counts for the whole model, divided by tp.
std::pair<int64_t, int64_t> nxd_per_rank(int64_t heads, int64_t kv, int64_t tp) {
  const int64_t padded = heads + (heads % tp == 0 ? 0 : tp - heads % tp);
  const bool replicate = tp % kv == 0;  // REPLICATE_TO_TP_DEGREE, else CONVERT_TO_MHA
  int64_t updated_kv = kv;
  if (heads == kv) updated_kv = padded;
  else if (kv < tp || kv % tp != 0) updated_kv = replicate ? tp : padded;
  return {padded / tp, updated_kv / tp};
}

Deployment on(int tp) {
  Deployment d;
  d.tp = tp;
  return d;
}

TEST(LlmHeadSharding, TrainiumPadsAndReplicatesAsNxdInference) {
  const hw::SystemSpec trn2 = hw::load_system("trn2.48xlarge");
  for (const char* name : {"llama-3.1-8b", "llama-2-7b", "llama-3.1-70b"}) {
    const ModelDesc m = load_model(name);
    for (int tp : {1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 48, 64}) {
      const Layout l = make_layout(m, on(tp), trn2);
      const auto [q, kv] = nxd_per_rank(m.heads, m.kv_heads, tp);
      EXPECT_EQ(l.q_heads, q) << name << " tp " << tp;
      EXPECT_EQ(l.kv_heads, kv) << name << " tp " << tp;
    }
  }
  // Llama 3.1 8B (32 heads, 8 KV heads) at tp 3: 33 padded heads, KV converted to MHA.
  const Layout l = make_layout(load_model("llama-3.1-8b"), on(3), trn2);
  EXPECT_EQ(l.q_heads, 11);
  EXPECT_EQ(l.kv_heads, 11);
}

TEST(LlmHeadSharding, GpuRefusesHeadsTpDoesNotDivideNamingModelHeadsAndTp) {
  Deployment d = on(3);
  d.system = "p5.48xlarge";
  try {
    make_gpu_step_cost(load_model("llama-3.1-8b"), d);
    FAIL() << "tp 3 accepted for 32 heads";
  } catch (const ConfigError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("llama-3.1-8b"), std::string::npos) << w;
    EXPECT_NE(w.find("32 attention heads"), std::string::npos) << w;
    EXPECT_NE(w.find("tp 3"), std::string::npos) << w;
    EXPECT_EQ(w.find('\n'), std::string::npos) << w;
  }
  ModelDesc m = load_model("llama-3.1-8b");
  m.heads = 24;
  m.kv_heads = 6;  // tp 4 divides the 24 heads, neither divides nor is a multiple of 6 KV heads
  d.tp = 4;
  EXPECT_THROW(make_gpu_step_cost(m, d), ConfigError);
  d.tp = 8;
  EXPECT_NO_THROW(make_gpu_step_cost(load_model("llama-3.1-8b"), d));
}

}  // namespace
