// The GPU baseline against closed forms (a big prefill GEMM at gemm_max of the peak, a batch-1
// decode at the HBM bound) and against TensorRT-LLM's published offline throughput
// (NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md, trtllm-bench, FP8; the rows of
// ../shared/reference/calibration/gpu_llm_throughput.csv): median |error| <= 15% (issue 15).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "trnsim/common/error.h"
#include "trnsim/hw/gpu_spec.h"
#include "trnsim/workloads/gpu_step_cost.h"
#include "trnsim/workloads/offline_throughput.h"

using namespace trnsim;
using namespace trnsim::workloads;

namespace {

ModelDesc llama_8b() { return load_model("llama-3.1-8b"); }
ModelDesc llama_70b() { return load_model("llama-3.3-70b"); }

Deployment fp8(const char* system, int tp) {
  Deployment d;
  d.system = system;
  d.tp = tp;
  d.dtype = d.weights = d.kv_dtype = "fp8";
  return d;
}

TEST(GpuStepCost, BigPrefillIsGemmBoundAtTheCalibratedEfficiency) {
  const hw::GpuSystemSpec s = hw::load_gpu_system("p5.48xlarge");
  const auto& e = s.gpu.efficiency;
  const auto c = make_gpu_step_cost(llama_8b(), fp8("p5.48xlarge", 1));
  StepBatch b;
  b.prefills.push_back({16384, 0});
  const StepCost r = c->step(b);
  // 2 x rows x (non-embedding parameters) FLOPs at gemm_max x rows / (rows + half), plus the LM
  // head of the one sequence (1 row).
  const double h = 4096, rows = 16384, params = 32 * (h * (32 + 16) * 128 + 32 * 128 * h + 3 * h * 14336);
  const double want = 2 * rows * params / (1979e12 * e.gemm_max * rows / (rows + e.gemm_half_rows)) +
                      2 * h * 128256 / (1979e12 * e.gemm_max / (1 + e.gemm_half_rows));
  EXPECT_NEAR(r.matmul.value() * 1e-9 / want, 1.0, 0.01);
  EXPECT_NEAR(r.time.value(), (r.matmul + r.attention + r.collective + r.other).value(), 1e-6 * r.time.value());
}

TEST(GpuStepCost, BatchOneDecodeIsHbmBound) {
  const hw::GpuSystemSpec s = hw::load_gpu_system("p5en.48xlarge");
  const auto c = make_gpu_step_cost(llama_8b(), fp8("p5en.48xlarge", 1));
  StepBatch b;
  b.decode_contexts = {0};
  const StepCost r = c->step(b);
  // Every weight (8.03 B parameters at 1 byte) but the input embedding (a lookup) once through
  // HBM at the memory efficiency.
  const double want = (c->weight_bytes_per_core().value() - 128256.0 * 4096) / (4.8e12 * s.gpu.efficiency.memory);
  EXPECT_NEAR(c->weight_bytes_per_core().value() / 8.03e9, 1.0, 0.01);
  EXPECT_NEAR(r.matmul.value() * 1e-9 / want, 1.0, 0.02);
  EXPECT_GT(r.energy.value(), 0);
}

// Context and generation attention are separate kernels in one iteration: their times add.
// Closed forms: decode attention reads each sequence's KV (ctx + 1 tokens x 2 x kv_heads x
// head_dim x 1 byte x layers) at the HBM bound; a 4096-token prefill from context 0 is bound by its
// causal FLOPs (4 n (n/2) heads head_dim x layers) at the attention fraction of the fp8 peak.
TEST(GpuStepCost, ContextAndGenerationAttentionTimesAdd) {
  const hw::GpuSystemSpec s = hw::load_gpu_system("p5.48xlarge");
  const auto& e = s.gpu.efficiency;
  const auto c = make_gpu_step_cost(llama_8b(), fp8("p5.48xlarge", 1));
  StepBatch decode, prefill, mixed;
  decode.decode_contexts.assign(64, 8191);
  prefill.prefills.push_back({4096, 0});
  mixed.decode_contexts = decode.decode_contexts;
  mixed.prefills = prefill.prefills;
  const double layers = 32, kv_token = 2 * 8 * 128 * 1.0;
  const double want_decode = 64 * 8192 * kv_token * layers / (3.35e12 * e.memory);
  const double want_prefill = 4 * 4096 * 2048.0 * 32 * 128 * layers / (1979e12 * e.attention);
  EXPECT_NEAR(c->step(decode).attention.value() * 1e-9 / want_decode, 1.0, 1e-6);
  EXPECT_NEAR(c->step(prefill).attention.value() * 1e-9 / want_prefill, 1.0, 1e-6);
  EXPECT_NEAR(c->step(mixed).attention.value() * 1e-9 / (want_decode + want_prefill), 1.0, 1e-6);
}

TEST(GpuStepCost, RejectsWhatDoesNotFit) {
  Deployment d = fp8("p5.48xlarge", 1);
  d.weights = d.dtype = "bf16";
  EXPECT_THROW(make_gpu_step_cost(llama_70b(), d), ShapeError);  // 141 GB of weights in 80 GB
  EXPECT_THROW(make_gpu_step_cost(llama_8b(), fp8("p5.48xlarge", 16)), ConfigError);
  EXPECT_THROW(hw::load_gpu_system("p9.48xlarge"), ConfigError);
}

struct Published {
  const char* model;
  const char* system;
  int tp;
  int64_t in, out;
  double tokens_per_s;
};

TEST(GpuStepCost, OfflineThroughputWithinFifteenPercentMedianOfTensorRtLlm) {
  const std::vector<Published> rows = {
    {"Llama-3.1-8B", "p5en.48xlarge", 1, 128, 128, 27911},
    {"Llama-3.1-8B", "p5en.48xlarge", 1, 128, 2048, 26221},
    {"Llama-3.1-8B", "p5en.48xlarge", 1, 128, 4096, 18027},
    {"Llama-3.1-8B", "p5en.48xlarge", 1, 500, 2000, 20770},
    {"Llama-3.1-8B", "p5en.48xlarge", 1, 1000, 1000, 17744},
    {"Llama-3.1-8B", "p5en.48xlarge", 1, 1000, 2000, 16828},
    {"Llama-3.1-8B", "p5en.48xlarge", 1, 2048, 128, 3538},
    {"Llama-3.1-8B", "p5en.48xlarge", 1, 2048, 2048, 12194},
    {"Llama-3.1-8B", "p5en.48xlarge", 1, 5000, 500, 3902},
    {"Llama-3.1-8B", "p5en.48xlarge", 1, 20000, 2000, 1804},
    {"Llama-3.1-8B", "p5.48xlarge", 1, 128, 128, 28312},
    {"Llama-3.1-8B", "p5.48xlarge", 1, 128, 2048, 22714},
    {"Llama-3.1-8B", "p5.48xlarge", 1, 128, 4096, 14325},
    {"Llama-3.1-8B", "p5.48xlarge", 1, 500, 2000, 17660},
    {"Llama-3.1-8B", "p5.48xlarge", 1, 1000, 1000, 15220},
    {"Llama-3.1-8B", "p5.48xlarge", 1, 1000, 2000, 13899},
    {"Llama-3.1-8B", "p5.48xlarge", 1, 2048, 128, 3450},
    {"Llama-3.1-8B", "p5.48xlarge", 1, 2048, 2048, 9305},
    {"Llama-3.1-8B", "p5.48xlarge", 1, 5000, 500, 3459},
    {"Llama-3.1-8B", "p5.48xlarge", 1, 20000, 2000, 1351},
    {"Llama-3.3-70B", "p5en.48xlarge", 1, 128, 128, 3803},
    {"Llama-3.3-70B", "p5en.48xlarge", 1, 128, 2048, 4336},
    {"Llama-3.3-70B", "p5en.48xlarge", 1, 128, 4096, 2872},
    {"Llama-3.3-70B", "p5en.48xlarge", 1, 500, 2000, 3666},
    {"Llama-3.3-70B", "p5en.48xlarge", 1, 1000, 1000, 2909},
    {"Llama-3.3-70B", "p5en.48xlarge", 1, 1000, 2000, 2994},
    {"Llama-3.3-70B", "p5en.48xlarge", 1, 2048, 128, 442},
    {"Llama-3.3-70B", "p5en.48xlarge", 1, 2048, 2048, 2003},
    {"Llama-3.3-70B", "p5en.48xlarge", 1, 5000, 500, 566},
    {"Llama-3.3-70B", "p5en.48xlarge", 1, 20000, 2000, 283},
    {"Llama-3.3-70B", "p5.48xlarge", 2, 128, 128, 6378},
    {"Llama-3.3-70B", "p5.48xlarge", 2, 128, 2048, 6651},
    {"Llama-3.3-70B", "p5.48xlarge", 2, 128, 4096, 4199},
    {"Llama-3.3-70B", "p5.48xlarge", 2, 500, 2000, 5222},
    {"Llama-3.3-70B", "p5.48xlarge", 2, 1000, 1000, 4205},
    {"Llama-3.3-70B", "p5.48xlarge", 2, 1000, 2000, 4146},
    {"Llama-3.3-70B", "p5.48xlarge", 2, 2048, 128, 762},
    {"Llama-3.3-70B", "p5.48xlarge", 2, 2048, 2048, 3082},
    {"Llama-3.3-70B", "p5.48xlarge", 2, 5000, 500, 898},
    {"Llama-3.3-70B", "p5.48xlarge", 2, 20000, 2000, 437},
  };
  std::vector<double> errors;
  for (const auto& p : rows) {
    const ModelDesc m = std::string(p.model) == "Llama-3.1-8B" ? llama_8b() : llama_70b();
    const auto c = make_gpu_step_cost(m, fp8(p.system, p.tp));
    OfflineOptions o;
    o.input_tokens = p.in;
    o.output_tokens = p.out;
    errors.push_back(std::fabs(offline_throughput(*c, o).output_tokens_per_s / p.tokens_per_s - 1));
  }
  std::sort(errors.begin(), errors.end());
  const double median = 0.5 * (errors[errors.size() / 2 - 1] + errors[errors.size() / 2]);
  EXPECT_LE(median, 0.15);
}

}  // namespace
