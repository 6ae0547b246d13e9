// Energy of the LLM step cost against closed forms: a step's energy is the sum of its nodes'
// (x their repeats) and the chips' static power over its time; a decode matmul's HBM energy is
// its weights' bytes at the configured per-byte energy; TensorE energy scales with V^2 under
// DVFS while HBM's does not; a generation is its prefill plus its decode steps; the GPU
// baseline's units sum to its energy.
#include <gtest/gtest.h>

#include <cmath>

#include "trnsim/hw/energy_loader.h"
#include "trnsim/hw/gpu_spec.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/workloads/llm_cost.h"
#include "trnsim/workloads/llm_generation.h"

using namespace trnsim;
using namespace trnsim::workloads;

namespace {

Deployment deployment(const std::string& system, int tp, double clock_scale = 1) {
  Deployment d;
  d.system = system;
  d.tp = tp;
  d.clock_scale = clock_scale;
  return d;
}

StepBatch decode(int n, int64_t context) {
  StepBatch b;
  b.decode_contexts.assign(static_cast<size_t>(n), context);
  return b;
}

const CostNode& node(const std::vector<CostNode>& ns, const std::string& suffix) {
  for (const auto& n : ns)
    if (n.name.ends_with(suffix)) return n;
  throw std::runtime_error("no node " + suffix);
}

}  // namespace

TEST(LlmEnergy, StepIsTheSumOfItsNodesAndStaticPower) {
  const ModelDesc m = load_model("llama-3-8b");
  TrainiumStepCost cost(m, deployment("trn1.32xlarge", 2));
  const StepBatch b = decode(4, 512);
  const StepCost c = cost.step(b);
  UnitEnergy sum;
  for (const auto& n : cost.nodes(b)) sum += n.energy * static_cast<double>(n.repeat);
  const double static_w = hw::load_chip("trn1").energy.static_power.value();  // 75 W, one chip at tp 2
  EXPECT_EQ(cost.chips(), 1);
  EXPECT_DOUBLE_EQ(cost.idle_power().value(), static_w);
  EXPECT_NEAR(c.energy_by_unit[EnergyUnit::Static], static_w * to_seconds(c.time), 1e-12);
  EXPECT_NEAR(c.energy.value(), sum.total() + static_w * to_seconds(c.time), 1e-9 * c.energy.value());
  EXPECT_NEAR(c.energy_by_unit.total(), c.energy.value(), 1e-12 * c.energy.value());
  EXPECT_GT(sum[EnergyUnit::TensorE], 0);
  EXPECT_GT(sum[EnergyUnit::HBM], 0);
  EXPECT_GT(sum[EnergyUnit::NeuronLink] + sum[EnergyUnit::HBM], 0);
}

TEST(LlmEnergy, DecodeMatmulHbmEnergyIsItsWeightBytes) {
  // Decode reads each weight once: the node's HBM energy on both ranks is the projection's
  // bytes (2 per bf16 weight) at hbm_per_byte, within 10% (activations and padding on top).
  const ModelDesc m = load_model("llama-3-8b");
  TrainiumStepCost cost(m, deployment("trn1.32xlarge", 2));
  const auto ns = cost.nodes(decode(4, 512));
  const hw::ChipSpec chip = hw::load_chip("trn1");
  const double per_rank_weights = double(m.hidden) * (m.heads + 2 * m.kv_heads) * m.head_dim / 2 * 2;  // tp 2, bf16
  const double expect = 2 * per_rank_weights * chip.energy.hbm_per_byte.value();
  const double hbm = node(ns, "qkv_proj").energy[EnergyUnit::HBM];
  EXPECT_GE(hbm, expect * 0.999);
  EXPECT_LE(hbm, expect * 1.10);
}

TEST(LlmEnergy, ClockScaleScalesComputeEnergyByVoltageSquared) {
  const ModelDesc m = load_model("llama-3-8b");
  TrainiumStepCost top(m, deployment("trn1.32xlarge", 2)), low(m, deployment("trn1.32xlarge", 2, 0.8));
  const auto a = node(top.nodes(decode(4, 512)), "qkv_proj").energy, b = node(low.nodes(decode(4, 512)), "qkv_proj").energy;
  const double v = hw::load_chip("trn1").energy.voltage_at(0.8);
  EXPECT_NEAR(b[EnergyUnit::TensorE] / a[EnergyUnit::TensorE], v * v, 1e-9);
  EXPECT_NEAR(b[EnergyUnit::HBM], a[EnergyUnit::HBM], 1e-12 * a[EnergyUnit::HBM]);  // HBM keeps its energy
  EXPECT_NEAR(low.idle_power().value(), 75.0 * v, 1e-9);                         // static power ~ V
}

TEST(LlmEnergy, GenerationIsPrefillPlusDecodeSteps) {
  const ModelDesc m = load_model("llama-3-8b");
  TrainiumStepCost cost(m, deployment("trn1.32xlarge", 2));
  GenerationRequest r;
  r.batch = 2, r.input = 128, r.output = 8;
  const auto g = simulate_generation(cost, r);
  EXPECT_NEAR(g.energy.total(), g.prefill.energy.value() + 7 * g.decode_mean.energy.value(), 1e-9 * g.energy.total());
  // Static power over the whole generation: one trn1 chip at 75 W for e2e.
  EXPECT_NEAR(g.energy[EnergyUnit::Static], 75.0 * g.e2e_s, 1e-9 * g.energy.total());
  const auto j = generation_json(cost, deployment("trn1.32xlarge", 2), r, g);
  double units = 0;
  for (const auto& [k, v] : j["energy_by_unit_j"].items()) units += v.get<double>();
  EXPECT_NEAR(units, j["energy_j"].get<double>(), 1e-9 * units);
  EXPECT_NEAR(j["average_power_w"].get<double>() * g.e2e_s, j["energy_j"].get<double>(), 1e-9 * units);
  EXPECT_GE(j["peak_power_w"].get<double>(), j["average_power_w"].get<double>());
}

TEST(LlmEnergy, GpuStepUnitsSumToItsEnergy) {
  const ModelDesc m = load_model("llama-3.1-8b");
  Deployment d = deployment("p5.48xlarge", 2);
  d.dtype = d.weights = d.kv_dtype = "fp8";
  const auto cost = make_step_cost(m, d);
  const StepCost c = cost->step(decode(8, 1000));
  const double static_w = hw::load_gpu_system("p5.48xlarge").gpu.energy.static_power.value();
  EXPECT_NEAR(c.energy_by_unit.total(), c.energy.value(), 1e-12 * c.energy.value());
  EXPECT_NEAR(c.energy_by_unit[EnergyUnit::Static], 2 * static_w * to_seconds(c.time), 1e-9 * c.energy.value());
  EXPECT_DOUBLE_EQ(cost->idle_power().value(), 2 * static_w);
  EXPECT_GT(c.energy_by_unit[EnergyUnit::SM], 0);
  EXPECT_GT(c.energy_by_unit[EnergyUnit::NVLink], 0);
}
