// Simulator speed (issue 3 targets): timing-only instructions per second of wall time, and
// functional-mode matmul throughput as a fraction of the host's own fp32 BLAS in the same run.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <chrono>
#include <random>

#include "trnsim/core/run.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/kernels/matmul.h"

using namespace trnsim;

namespace {

const hw::ChipSpec& trn1() {
  static hw::ChipSpec c = hw::load_chip("trn1");
  return c;
}

// Timing-only run of the calibration matmul (~39k instructions), program built once.
void BM_TimingOnlyMatmul(benchmark::State& st) {
  const bool record = st.range(0) != 0;
  auto p = kernels::matmul_program(trn1(), {4096, 8192, 8192, numerics::DType::BF16, numerics::DType::BF16},
                                   kernels::MatmulVariant::Optimized);
  core::RunOptions o;
  o.mode = core::Mode::Timing;
  o.record_instructions = record;
  o.validate = false;  // validation is per program, not per instruction executed
  uint64_t n = 0;
  double sim_ms = 0;
  for (auto _ : st) {
    auto r = core::run(p, trn1(), {}, o);
    n += r.instructions;
    sim_ms = r.total_ms();
  }
  st.counters["instr_per_s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsRate);
  st.counters["simulated_ms"] = sim_ms;
}
BENCHMARK(BM_TimingOnlyMatmul)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMillisecond);

// A vector/scalar-heavy stream (many small dependent instructions across engines and DMA).
void BM_TimingOnlyMixed(benchmark::State& st) {
  kernels::KernelBuilder kb(trn1());
  auto x = kb.hbm_input("x", {128, 512}, numerics::DType::BF16);
  auto y = kb.hbm_output("y", {128, 512}, numerics::DType::BF16);
  kernels::Tile a = kb.sbuf_tile({128, 512}, numerics::DType::BF16);
  kernels::Tile b = kb.sbuf_tile({128, 512}, numerics::DType::BF16);
  kernels::Tile s = kb.sbuf_tile({128, 1}, numerics::DType::F32);
  kb.load(a, x);
  for (int i = 0; i < 20000; ++i) {
    kb.activation(b, a, isa::ActFunc::Exp, 1.0f, 0.0f, &s);
    kb.tensor_scalar(a, b, isa::AluOp::Mul, kernels::Scalar(s), isa::AluOp::Add, 1.0f);
    kb.tensor_tensor(b, a, b, isa::AluOp::Max);
    kb.copy(a.slice({{0, 128}, {0, 64}}), b.slice({{0, 128}, {0, 64}}), {isa::Engine::GpSimd});
  }
  kb.store(y, a);
  auto p = kb.build();
  core::RunOptions o;
  o.mode = core::Mode::Timing;
  o.record_instructions = false;
  o.validate = false;
  uint64_t n = 0;
  for (auto _ : st) n += core::run(p, trn1(), {}, o).instructions;
  st.counters["instr_per_s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TimingOnlyMixed)->UseRealTime()->Unit(benchmark::kMillisecond);

// Functional matmul (optimised kernel, fp32 or bf16 operands, 1024^3 and 2048^3) against cblas_sgemm of the same
// size, measured back to back in one benchmark; the ratio is the target (>= 0.3).
void BM_FunctionalMatmulVsBlas(benchmark::State& st) {
  const int64_t n = st.range(0);
  const auto dt = static_cast<numerics::DType>(st.range(1));
  auto p = kernels::matmul_program(trn1(), {n, n, n, dt, numerics::DType::F32}, kernels::MatmulVariant::Optimized);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(n * n), b(n * n), c(n * n);
  for (auto& v : a) v = u(rng);
  for (auto& v : b) v = u(rng);
  core::RunOptions o;
  o.record_instructions = false;
  double sim_s = 0, blas_s = 0;
  uint64_t hash = 1469598103934665603ull;  // FNV-1a of the result bytes (bit-identity checks)
  for (auto _ : st) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = core::run(p, trn1(), {{"lhsT", a}, {"rhs", b}}, o);
    auto t1 = std::chrono::steady_clock::now();
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    auto t2 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(r.outputs);
    if (hash == 1469598103934665603ull) {
      const auto& out = r.outputs.at("result");
      const auto* bytes = reinterpret_cast<const unsigned char*>(out.data());
      for (size_t i = 0; i < out.size() * sizeof(float); ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
    }
    sim_s += std::chrono::duration<double>(t1 - t0).count();
    blas_s += std::chrono::duration<double>(t2 - t1).count();
  }
  double flops = 2.0 * n * n * n * st.iterations();
  st.counters["sim_GFLOPS"] = flops / sim_s * 1e-9;
  st.counters["blas_GFLOPS"] = flops / blas_s * 1e-9;
  st.counters["ratio"] = blas_s / sim_s;
  st.counters["result_hash"] = static_cast<double>(hash & ((1ull << 52) - 1));
}
BENCHMARK(BM_FunctionalMatmulVsBlas)
    ->Args({1024, static_cast<int>(numerics::DType::F32)})
    ->Args({1024, static_cast<int>(numerics::DType::BF16)})
    ->Args({2048, static_cast<int>(numerics::DType::F32)})
    ->Args({2048, static_cast<int>(numerics::DType::BF16)})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
