// The energy model against closed forms: a chip with every TensorE busy draws its configured
// power; a run's energy is the sum of its units'; each unit's energy is its work times the
// config's coefficients; a lower operating point scales time and energy as the V-f curve says.
#include <gtest/gtest.h>

#include <numeric>

#include "trnsim/common/error.h"
#include "trnsim/core/run.h"
#include "trnsim/core/tile_io.h"
#include "trnsim/hw/energy_loader.h"
#include "trnsim/hw/gpu_spec.h"
#include "trnsim/hw/power_cap.h"
#include "trnsim/hw/spec_loader.h"

using namespace trnsim;
using namespace trnsim::isa;
using numerics::DType;

namespace {

AccessPattern sb(int P, int64_t F, DType t, int64_t off = 0) { return tile_ap(Space::SBUF, 0, P, off, F, t); }
AccessPattern ps(int P, int64_t F, int64_t off = 0) { return tile_ap(Space::PSUM, 0, P, off, F, DType::F32); }

core::RunResult timing(const Program& p, const hw::ChipSpec& chip) {
  core::RunOptions o;
  o.mode = core::Mode::Timing;
  o.record_instructions = false;
  return core::run(p, chip, {}, o);
}

// Every core's TensorE streams `n` bf16 matmuls (K=M=128, N=512) on one stationary: ~100% busy.
Program full_tensor(const hw::ChipSpec& chip, int n) {
  Program p;
  p.name = "full_tensor";
  p.cores.resize(chip.neuron_cores);
  for (auto& c : p.cores) {
    auto& te = c.stream(Engine::Tensor);
    for (int i = 0; i < n; ++i)
      te.push_back({Matmul{ps(128, 512), sb(128, 128, DType::BF16), sb(128, 512, DType::BF16, 1024), true, true}, {}});
  }
  return p;
}

class FullTensorE : public ::testing::TestWithParam<const char*> {};

TEST_P(FullTensorE, DrawsTheConfiguredPowerWithinTwoPercent) {
  const hw::ChipSpec chip = hw::load_chip(GetParam());
  // The configured power: the published one where there is one (trn2, trn3), else the estimate.
  const double want = chip.power ? chip.power->value() : chip.energy.full_power.value();
  if (chip.power) EXPECT_EQ(chip.energy.full_power.value(), chip.power->value());
  const core::RunResult r = timing(full_tensor(chip, 400), chip);
  for (const auto& u : r.units) EXPECT_GT(static_cast<double>(u.busy_ps) / r.total.ps(), 0.99);
  EXPECT_NEAR(r.energy.average_w(r.total) / want, 1.0, 0.02);
  EXPECT_NEAR(r.energy.peak_w / want, 1.0, 0.03);  // flat: peak ~ average
}
INSTANTIATE_TEST_SUITE_P(Presets, FullTensorE, ::testing::Values("trn1", "inf2", "trn2", "trn3"));

TEST(Energy, RunIsTheSumOfItsUnitsAndEachUnitFollowsTheCoefficients) {
  const hw::ChipSpec chip = hw::load_chip("trn2");
  const auto& e = chip.energy;
  Program p;
  p.name = "mixed";
  p.cores.resize(1);
  p.cores[0].dma_queues.resize(1);
  p.semaphores = 2;
  HbmTensor t;
  t.name = "x";
  t.dtype = DType::BF16;
  t.shape = {128, 512};
  t.kind = HbmTensor::Kind::Input;
  p.tensors.push_back(t);
  AccessPattern hbm = sb(128, 512, DType::BF16);
  hbm.space = Space::HBM;
  hbm.tensor = 0;
  hbm.offset = 0;
  hbm.partition_stride = 512;
  Instruction dma{Dma{sb(128, 512, DType::BF16, 1024), hbm}, {}};
  dma.sync.signal = 0;
  p.cores[0].dma_queues[0].push_back(dma);
  Instruction mm{Matmul{ps(128, 512), sb(128, 128, DType::BF16), sb(128, 512, DType::BF16, 1024), true, true}, {}};
  mm.sync.add_wait(0, 1);
  mm.sync.signal = 1;
  p.cores[0].stream(Engine::Tensor).push_back(mm);
  Instruction add{TensorTensor{sb(128, 512, DType::F32, 8192), ps(128, 512), ps(128, 512), AluOp::Add}, {}};
  add.sync.add_wait(1, 1);
  p.cores[0].stream(Engine::Vector).push_back(add);

  const core::RunResult r = timing(p, chip);
  double units = 0;
  for (const auto& u : r.units) units += u.energy_j;
  EXPECT_NEAR(r.energy.total_j, units + r.energy.hbm_j + r.energy.static_j, 1e-15);
  const auto by = r.energy_by_unit();
  EXPECT_NEAR(std::accumulate(by.begin(), by.end(), 0.0, [](double s, auto& kv) { return s + kv.second; }),
              r.energy.total_j, 1e-15);
  // Closed forms from the YAML coefficients.
  const double bytes = 128 * 512 * 2;
  EXPECT_DOUBLE_EQ(r.energy.hbm_j, bytes * e.hbm_per_byte.value());
  EXPECT_DOUBLE_EQ(by.at("DMA"), bytes * e.sbuf_per_byte.value());
  const double macs = 128.0 * 128 * 512;
  const double te = macs * e.tensor_per_mac.at(DType::BF16).value() +
                    (128 * 128 * 2 + bytes) * e.sbuf_per_byte.value() + 128 * 512 * 4 * e.psum_per_byte.value();
  EXPECT_NEAR(by.at("TensorE") / te, 1.0, 1e-12);
  const double ve = 128 * 512 * e.vector_per_element.value() +
                    128 * 512 * 4 * (e.sbuf_per_byte.value() + 2 * e.psum_per_byte.value());
  EXPECT_NEAR(by.at("VectorE") / ve, 1.0, 1e-12);
  EXPECT_NEAR(r.energy.static_j, e.static_power.value() * r.total.ps() * 1e-12, 1e-18);
  // The power timeline holds all the dynamic energy.
  const double binned = std::accumulate(r.energy.bins_j.begin(), r.energy.bins_j.end(), 0.0);
  EXPECT_NEAR(binned, r.energy.total_j - r.energy.static_j, 1e-15);
  EXPECT_GE(r.energy.peak_w, r.energy.average_w(r.total));
}

TEST(Energy, LowerOperatingPointScalesTimeAndEnergyByTheCurve) {
  const hw::ChipSpec top = hw::load_chip("trn2");
  const hw::ChipSpec low = hw::at_clock_scale(top, 0.75);
  const double v = 0.83 + (0.88 - 0.83) * 0.5;  // between the 0.7 and 0.8 points of trn2.yaml
  EXPECT_NEAR(low.energy.voltage_scale, v, 1e-12);
  EXPECT_NEAR(low.core.tensor.clock.value(), 2.4 * 0.75, 1e-12);
  const core::RunResult a = timing(full_tensor(top, 100), top);
  const core::RunResult b = timing(full_tensor(low, 100), low);
  EXPECT_NEAR(static_cast<double>(b.total.ps()) / a.total.ps(), 1 / 0.75, 1e-3);
  auto dynamic = [](const core::RunResult& r) { return r.energy.total_j - r.energy.static_j; };
  EXPECT_NEAR(dynamic(b) / dynamic(a), v * v, 1e-9);
  EXPECT_NEAR(b.energy.static_w / a.energy.static_w, v, 1e-12);
  EXPECT_THROW(hw::at_clock_scale(top, 0.3), UnsupportedError);
  EXPECT_THROW(hw::at_clock_scale(top, 1.2), UnsupportedError);
}

TEST(PowerCap, ThrottledClockMeetsTheCapWithinOnePercent) {
  const hw::ChipSpec chip = hw::load_chip("trn2");
  auto measure = [](const hw::ChipSpec& c) {
    const core::RunResult r = timing(full_tensor(c, 100), c);
    return hw::PowerMeasure{r.total.ps() * 1e-12, r.energy.total_j};
  };
  const hw::Throttle t = hw::throttle_to_cap(chip, Watts(400), measure);
  ASSERT_TRUE(t.met);
  EXPECT_GT(t.at_top.power_w(), 400);
  EXPECT_LE(t.at_scale.power_w(), 400);
  EXPECT_GE(t.at_scale.power_w(), 400 * 0.99);
  // Closed form of a TensorE-bound chip: P(f) = static V(f) + (P(1) - static) f V(f)^2.
  const double st = chip.energy.static_power.value(), p1 = t.at_top.power_w();
  double lo = 0.5, hi = 1;
  for (int i = 0; i < 60; ++i) {
    const double f = 0.5 * (lo + hi), v = chip.energy.voltage_at(f);
    (st * v + (p1 - st) * f * v * v > 400 ? hi : lo) = f;
  }
  EXPECT_NEAR(t.clock_scale / lo, 1.0, 0.01);
  // An unreachable cap says so; an instance cap leaves the hosts their power.
  EXPECT_FALSE(hw::throttle_to_cap(chip, Watts(100), measure).met);
  const hw::SystemSpec sys = hw::load_system("trn2.48xlarge");
  EXPECT_NEAR(hw::chip_cap(sys, "instance", Watts(10000)).value(),
              (10000 - sys.energy.host_power_per_instance.value()) / 16, 1e-9);
  EXPECT_THROW(hw::chip_cap(sys, "instance", Watts(1000)), ConfigError);
  // A rack: instances_per_rack (2) hosts and the rack's overhead (1,500 W) off first, 32 chips.
  EXPECT_NEAR(hw::chip_cap(sys, "rack", Watts(30000)).value(), (30000 - 2 * 2500.0 - 1500) / 32, 1e-9);
  EXPECT_THROW(hw::chip_cap(sys, "rack", Watts(6000)), ConfigError);
  EXPECT_THROW(hw::chip_cap(sys, "pod", Watts(6000)), ConfigError);
  EXPECT_THROW(hw::chip_cap(hw::load_system("trn1.2xlarge"), "rack", Watts(6000)), ConfigError);  // no rack given
}

TEST(PowerCap, GpuOperatingPointScalesPeaksAndEnergy) {
  const hw::GpuSystemSpec top = hw::load_gpu_system("p5.48xlarge");
  const hw::GpuSystemSpec low = hw::gpu_at_clock_scale(top, 0.8);
  const double v = 0.88;  // configs/gpus/h100.yaml at clock 0.8
  EXPECT_DOUBLE_EQ(low.gpu.peak(numerics::DType::BF16).value(), 0.8 * top.gpu.peak(numerics::DType::BF16).value());
  EXPECT_DOUBLE_EQ(low.gpu.energy.per_flop.value(), v * v * top.gpu.energy.per_flop.value());
  EXPECT_DOUBLE_EQ(low.gpu.energy.static_power.value(), v * top.gpu.energy.static_power.value());
  EXPECT_EQ(low.gpu.hbm.bandwidth.value(), top.gpu.hbm.bandwidth.value());
  // From 0.8 to 0.5: relative to where it is, ending at the curve's point for 0.5.
  const hw::GpuSystemSpec lower = hw::gpu_at_clock_scale(low, 0.5);
  EXPECT_NEAR(lower.gpu.peak(numerics::DType::BF16).value(), 0.5 * top.gpu.peak(numerics::DType::BF16).value(), 1e-6);
  EXPECT_NEAR(lower.gpu.energy.static_power.value(), 0.74 * top.gpu.energy.static_power.value(), 1e-9);
  EXPECT_THROW(hw::gpu_at_clock_scale(top, 0.3), UnsupportedError);
}

}  // namespace
