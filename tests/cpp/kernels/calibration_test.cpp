// The calibration point of issue 3: [4096,8192] @ [8192,8192] bf16 on one NeuronCore-v2.
#include <gtest/gtest.h>

#include <chrono>

#include "trnsim/core/run.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/kernels/matmul.h"

using namespace trnsim;
using namespace trnsim::kernels;

namespace {
double simulate_ms(const hw::ChipSpec& chip, MatmulShape s, MatmulVariant v, core::RunResult* out = nullptr) {
  isa::Program p = matmul_program(chip, s, v);
  core::RunOptions o;
  o.mode = core::Mode::Timing;
  o.record_instructions = false;
  auto r = core::run(p, chip, {}, o);
  if (out) *out = r;
  return r.total_ms();
}
}  // namespace

TEST(Calibration, OptimisedMatmulOnTrn1WithinTenPercentOfNki) {
  hw::ChipSpec chip = hw::load_chip("trn1");
  auto t0 = std::chrono::steady_clock::now();
  core::RunResult r;
  double ms = simulate_ms(chip, {4096, 8192, 8192, DType::BF16, DType::BF16}, MatmulVariant::Optimized, &r);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double peak_tflops = 128.0 * 128 * 2 * chip.core.tensor.clock.value() * 1e-3;
  double flops = 2.0 * 4096 * 8192 * 8192;
  std::printf("optimised: %.3f ms (%.1f%% of TensorE peak), %llu instructions, %llu events, %.2f s wall\n", ms,
              100.0 * flops / (ms * 1e-3) / (peak_tflops * 1e12), (unsigned long long)r.instructions,
              (unsigned long long)r.events, wall);
  for (auto& u : r.units)
    if (u.unit.engine != isa::Engine::Dma || u.unit.queue < 2)
      std::printf("  %s: busy %.3f ms, %llu instructions\n", u.unit.name().c_str(), u.busy_ps * 1e-9,
                  (unsigned long long)u.instructions);
  EXPECT_NEAR(ms, 6.97, 0.697);
}

TEST(Calibration, NaiveMatmulFarSlower) {
  hw::ChipSpec chip = hw::load_chip("trn1");
  double ms = simulate_ms(chip, {4096, 8192, 8192, DType::BF16, DType::BF16}, MatmulVariant::Naive);
  std::printf("naive: %.3f ms\n", ms);
  EXPECT_GT(ms, 4 * 6.97);
}
