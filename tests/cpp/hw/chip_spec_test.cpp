// Derived chip numbers against closed forms, and the presets against the public figures collected
// in ../shared/reference/HARDWARE.md (quoted here with the tolerance each comparison allows).
#include "trnsim/hw/chip_spec.h"

#include <gtest/gtest.h>

#include "trnsim/common/error.h"
#include "trnsim/hw/spec_loader.h"

namespace trnsim::hw {
namespace {

using numerics::DType;

// rows x cols x 2 FLOP x clock (Hz) x cores x rate, in TFLOPS.
double clock_math(double clock_hz, int cores, double rate) { return 128.0 * 128 * 2 * clock_hz * cores * rate / 1e12; }

TEST(ChipSpec, ClockDerivedPeakIsTheSystolicArrayClosedForm) {
  ChipSpec trn1 = load_chip("trn1");
  EXPECT_DOUBLE_EQ(trn1.clock_derived_tflops(DType::BF16).value(), clock_math(2.8e9, 2, 1));  // 183.5
  EXPECT_DOUBLE_EQ(trn1.clock_derived_tflops(DType::F32).value(), clock_math(2.8e9, 2, 0.25));
  EXPECT_DOUBLE_EQ(trn1.clock_derived_tflops(DType::F8E4M3).value(), clock_math(2.8e9, 2, 1));  // cFP8 at bf16 rate
  ChipSpec trn2 = load_chip("trn2");
  EXPECT_DOUBLE_EQ(trn2.clock_derived_tflops(DType::BF16).value(), clock_math(2.4e9, 8, 1));  // ~629
  EXPECT_DOUBLE_EQ(trn2.clock_derived_tflops(DType::F8E4M3).value(), clock_math(2.4e9, 8, 2));  // double row
  ChipSpec trn3 = load_chip("trn3");
  EXPECT_DOUBLE_EQ(trn3.clock_derived_tflops(DType::MXFP4).value(), clock_math(2.4e9, 8, 4));
  EXPECT_DOUBLE_EQ(trn3.clock_derived_tflops(DType::MXFP8E4M3).value(), clock_math(2.4e9, 8, 4));
}

TEST(ChipSpec, PeakIsPublishedWhereKnownElseClockDerived) {
  ChipSpec trn2 = load_chip("trn2");
  EXPECT_DOUBLE_EQ(trn2.peak_tflops(DType::BF16).value(), trn2.dense_tflops.at(DType::BF16).value());
  ChipSpec trn3 = load_chip("trn3");
  ASSERT_EQ(trn3.dense_tflops.count(DType::F8E4M3), 0u);  // only MX FP8 is published for Trn3
  EXPECT_DOUBLE_EQ(trn3.peak_tflops(DType::F8E4M3).value(), trn3.clock_derived_tflops(DType::F8E4M3).value());
  EXPECT_THROW(load_chip("trn1").peak_tflops(DType::MXFP4), UnsupportedError);
  EXPECT_FALSE(load_chip("trn1").supports(DType::MXFP4));
}

TEST(ChipSpec, RooflineKneeIsPeakOverHbmBandwidth) {
  ChipSpec trn1 = load_chip("trn1");
  // 190 TFLOPS over 820 GiB/s.
  EXPECT_DOUBLE_EQ(trn1.roofline_knee(DType::BF16), 190e12 / (820.0 * 1024 * 1024 * 1024));
  // HARDWARE.md: the NKI roofline knee for NeuronCore-v2 BF16 is 222 FLOP/byte; the chip-level
  // figures (190 TFLOPS, 820 GiB/s) give 216, within 5%.
  EXPECT_NEAR(trn1.roofline_knee(DType::BF16), 222, 222 * 0.05);
  ChipSpec trn2 = load_chip("trn2");
  EXPECT_DOUBLE_EQ(trn2.roofline_knee(DType::BF16), 667e12 / 2.9e12);
}

// HARDWARE.md, "Chips": published dense peaks (acceptance: within 5%) and HBM (exact).
TEST(Presets, MatchHardwareReference) {
  struct Row { const char* chip; double bf16, fp32; double hbm_gib, hbm_gbps; int cores; };
  const Row rows[] = {
      {"trn1", 190, 47.5, 32, 820 * 1.073741824, 2},
      {"inf2", 190, 47.5, 32, 820 * 1.073741824, 2},
      {"trn2", 667, 181, 96, 2900, 8},
      {"trn3", 671, 183, 144, 4900, 8},
  };
  for (auto& r : rows) {
    SCOPED_TRACE(r.chip);
    ChipSpec c = load_chip(r.chip);
    EXPECT_NEAR(c.peak_tflops(DType::BF16).value(), r.bf16, r.bf16 * 0.05);
    EXPECT_NEAR(c.peak_tflops(DType::F32).value(), r.fp32, r.fp32 * 0.05);
    EXPECT_DOUBLE_EQ(c.hbm.capacity.value(), r.hbm_gib * kGiB);
    EXPECT_NEAR(c.hbm.bandwidth.value(), r.hbm_gbps, 1e-9 * r.hbm_gbps);
    EXPECT_EQ(c.neuron_cores, r.cores);
    // HARDWARE.md notes the clock math sits ~6% under the published BF16 figure on Trn2/Trn3.
    EXPECT_NEAR(c.clock_derived_tflops(DType::BF16).value(), r.bf16, r.bf16 * 0.07);
  }
  EXPECT_NEAR(load_chip("trn2").peak_tflops(DType::F8E4M3).value(), 1299, 1299 * 0.05);
  EXPECT_NEAR(load_chip("trn3").peak_tflops(DType::MXFP8E4M3).value(), 2517, 2517 * 0.05);
  EXPECT_NEAR(load_chip("trn2").sparse_tflops.at(DType::BF16).value(), 2563, 2563 * 0.05);
}

// HARDWARE.md: DMA bandwidth per core 272 / 368 / 528 GB/s = 16 engines x 17 / 23 / 33 B/ns.
TEST(Presets, DmaAndScratchpads) {
  struct Row { const char* chip; double per_engine; double sbuf_mib; };
  for (auto r : {Row{"trn1", 17, 24}, Row{"trn2", 23, 28}, Row{"trn3", 33, 32}}) {
    SCOPED_TRACE(r.chip);
    CoreSpec core = load_chip(r.chip).core;
    EXPECT_EQ(core.dma.engines, 16);
    EXPECT_EQ(core.dma.queues_per_engine, 16);
    EXPECT_DOUBLE_EQ(core.dma.bandwidth_per_engine.value(), r.per_engine);
    EXPECT_DOUBLE_EQ(core.sbuf.capacity().value(), r.sbuf_mib * kMiB);
    EXPECT_DOUBLE_EQ(core.psum.capacity().value(), 2 * kMiB);
    EXPECT_EQ(core.psum.banks, 8);
  }
  EXPECT_TRUE(load_chip("trn1").core.shared_sbuf_port_vector_gpsimd);
  EXPECT_FALSE(load_chip("trn2").core.shared_sbuf_port_vector_gpsimd);
}

// HARDWARE.md, "Systems" and prices.
TEST(Presets, Systems) {
  SystemSpec trn1 = load_system("trn1.32xlarge");
  EXPECT_EQ(trn1.chips, 16);
  EXPECT_EQ(trn1.topology.kind, "torus2d");
  EXPECT_DOUBLE_EQ(trn1.scale_out.bandwidth_per_instance.value(), 800.0 / 8);  // 800 Gbps
  EXPECT_DOUBLE_EQ(trn1.price->value(), 21.50);
  EXPECT_DOUBLE_EQ(load_system("trn1.2xlarge").price->value(), 1.34);
  SystemSpec inf2 = load_system("inf2.48xlarge");
  EXPECT_EQ(inf2.chips, 12);
  EXPECT_EQ(inf2.topology.kind, "ring");
  EXPECT_NEAR(inf2.topology.bandwidth_per_chip.value(), 192 * 1.073741824, 1e-9);
  EXPECT_DOUBLE_EQ(inf2.price->value(), 12.98);
  SystemSpec trn2 = load_system("trn2.48xlarge");
  EXPECT_EQ(trn2.topology.dims, (std::vector<int>{4, 4}));
  EXPECT_DOUBLE_EQ(trn2.topology.bandwidth_per_chip.value(), 1024);
  EXPECT_DOUBLE_EQ(trn2.scale_out.bandwidth_per_instance.value(), 3200.0 / 8);
  EXPECT_FALSE(trn2.price.has_value());  // no public on-demand price
  SystemSpec us = load_system("trn2-ultraserver");
  EXPECT_EQ(us.chips, 64);
  EXPECT_EQ(us.instances(), 4);
  double per_dim = 0;
  for (auto bw : us.topology.bandwidth_per_dim) per_dim += bw.value();
  EXPECT_DOUBLE_EQ(per_dim, us.topology.bandwidth_per_chip.value());  // 512 + 512 + 256 = 1280
  EXPECT_DOUBLE_EQ(us.topology.bandwidth_per_dim.back().value(), 256);
  EXPECT_EQ(load_system("trn3-ultraserver-gen1").chips, 64);
  SystemSpec gen2 = load_system("trn3-ultraserver-gen2");
  EXPECT_EQ(gen2.chips, 144);
  EXPECT_EQ(gen2.instances(), 36);
  EXPECT_EQ(gen2.topology.kind, "switch");
  EXPECT_DOUBLE_EQ(gen2.topology.bandwidth_per_chip.value(), 2048 * kGiB / 1e9);
}

// configs/examples/: the documented what-if loads and means what its comments say.
TEST(Examples, Trn4WhatIf) {
  const std::string dir = std::string(TRNSIM_SOURCE_DIR) + "/configs/examples/";
  ChipSpec trn4 = load_chip(dir + "trn4-whatif.yaml");
  ChipSpec trn3 = load_chip("trn3");
  EXPECT_EQ(trn4.name, "trn4-whatif");
  EXPECT_TRUE(trn4.dense_tflops.empty());  // nothing published: every peak is clock-derived
  EXPECT_DOUBLE_EQ(trn4.peak_tflops(DType::MXFP4).value(), clock_math(2.4e9, 8, 8));
  EXPECT_DOUBLE_EQ(trn4.hbm.capacity.value(), 2 * trn3.hbm.capacity.value());
  SystemSpec us = load_system(dir + "trn4-whatif-ultraserver.yaml");
  EXPECT_EQ(us.chip.name, "trn4-whatif");
  EXPECT_EQ(us.chips, 144);
}

}  // namespace
}  // namespace trnsim::hw
