// The training step on a stand-in forward cost (fake_step_cost.h): ZeRO traffic against the
// ring's closed forms, the pipeline's bubble in the step, memory-fit errors, the breakdown
// summing to the step, determinism.
#include <gtest/gtest.h>

#include "fake_step_cost.h"
#include "trnsim/common/error.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/workloads/train_memory.h"
#include "trnsim/workloads/train_step.h"

namespace trnsim::workloads {
namespace {

using testing::fake_factory;

TrainConfig llama7b_config() {  // the Llama-2-7B row of training.csv
  TrainConfig c;
  c.compute_cost = "step-cost";  // the stand-in forward cost
  c.system = "trn1.32xlarge";
  c.nodes = 16, c.tp = 8, c.zero = 1;
  c.global_batch = 1024, c.seq = 4096;
  return c;
}

TEST(TrainStep, ZeroTrafficIsTheRingsShareOfTheModel) {
  const hw::SystemSpec sys = hw::load_system("trn1.32xlarge");
  const ModelDesc m = testing::llama2_7b();
  for (int zero : {0, 1, 2, 3}) {
    TrainConfig c = llama7b_config();
    c.zero = zero;
    c.recompute = Recompute::Full;
    const TrainStep s = train_step(m, c, sys, fake_factory());
    const double n = s.layout.dp;  // 64
    const double params = rank_params(m, c, 0).total();
    // All-reduce (ZeRO 0) or reduce-scatter + all-gather (1, 2): 2(n-1)/n of the model per step;
    // ZeRO-2 reduce-scatters every micro-batch; ZeRO-3 also gathers twice per micro-batch.
    const double micro = double(s.layout.micro_batches);
    const double expect = zero <= 1 ? 2 : zero == 2 ? micro + 1 : 3 * micro;
    EXPECT_NEAR(s.dp_param_elements_per_rank, expect * (n - 1) / n * params, 1e-6 * params) << "zero " << zero;
  }
}

TEST(TrainStep, ZeroZeroBytesAreTwoNMinusOneOverNOfTheGradients) {
  const hw::SystemSpec sys = hw::load_system("trn1.32xlarge");
  const ModelDesc m = testing::llama2_7b();
  TrainConfig c = llama7b_config();
  c.zero = 0;
  c.tp = 32;  // a whole model replica per node, so it fits without ZeRO
  c.recompute = Recompute::Full;
  const TrainStep s = train_step(m, c, sys, fake_factory());
  const double n = s.layout.dp;  // 16
  const double grads = rank_params(m, c, 0).total() * 4.0;  // fp32 gradients
  EXPECT_NEAR(s.dp_bytes_per_rank, 2 * (n - 1) / n * grads, 1e-6 * grads);
}

TEST(TrainStep, BreakdownSumsToTheStepAndPipelineBubbleIsTheClosedForm) {
  const hw::SystemSpec sys = hw::load_system("trn1.32xlarge");
  TrainConfig c;  // GPT-3 175B row of training.csv
  c.compute_cost = "step-cost";
  c.nodes = 32, c.tp = 32, c.pp = 8, c.global_batch = 1024, c.seq = 2048;
  c.precision = Precision::StochasticRounding;
  c.recompute = Recompute::Full;
  const TrainStep s = train_step(testing::gpt3_175b(), c, sys, fake_factory());
  EXPECT_EQ(s.layout.dp, 4);
  EXPECT_EQ(s.layout.micro_batches, 256);
  EXPECT_NEAR(s.compute_ns + s.exposed_comm_ns + s.bubble_ns + s.optimizer_ns, s.step_ns, 1e-6 * s.step_ns);
  // Stages differ only by the head on the last one (the busiest rank, whose idle share is a bit
  // below the equal-stage (p-1)/(m+p-1)) and by the sends between stages.
  const double closed = 7.0 / (256 + 7);
  EXPECT_NEAR(s.bubble_fraction / closed, 1.0, 0.25);
  EXPECT_GT(s.mfu, 0.05);
  EXPECT_LT(s.mfu, 0.6);
}

TEST(TrainStep, LayoutThatDoesNotFitSaysByHowMuch) {
  const hw::SystemSpec sys = hw::load_system("trn1.32xlarge");
  TrainConfig c;
  c.compute_cost = "step-cost";
  c.nodes = 2, c.tp = 8, c.global_batch = 64, c.seq = 4096;  // 70B over 8 cores, no ZeRO
  try {
    train_step(testing::llama2_70b(), c, sys, fake_factory());
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("does not fit"), std::string::npos) << msg;
    EXPECT_NE(msg.find("over by"), std::string::npos) << msg;
    EXPECT_NE(msg.find("16.00 GiB"), std::string::npos) << msg;  // a trn1 core's share of 32 GiB
  }
  // Weights + gradients + optimizer of a 70B model over 8 cores: 16 bytes per parameter.
  const MemoryUse u = memory_per_core(testing::llama2_70b(), c, make_layout(c, sys), {1}, 16.0 * (1 << 30));
  const double params = rank_params(testing::llama2_70b(), c, 0).total();
  EXPECT_NEAR(u.weights + u.gradients + u.optimizer, 18.0 * params, 1e-6 * params);
}

TEST(TrainStep, BadLayoutsAreConfigErrors) {
  const hw::SystemSpec sys = hw::load_system("trn1.32xlarge");
  TrainConfig c = llama7b_config();
  c.dp = 3;
  EXPECT_THROW(make_layout(c, sys), ConfigError);
  c = llama7b_config();
  c.global_batch = 1000;  // not a multiple of dp 64
  EXPECT_THROW(make_layout(c, sys), ConfigError);
  c = llama7b_config();
  c.tp = 3;
  EXPECT_THROW(make_layout(c, sys), ConfigError);
}

TEST(TrainStep, Deterministic) {
  const hw::SystemSpec sys = hw::load_system("trn1.32xlarge");
  const TrainStep a = train_step(testing::llama2_7b(), llama7b_config(), sys, fake_factory());
  const TrainStep b = train_step(testing::llama2_7b(), llama7b_config(), sys, fake_factory());
  EXPECT_EQ(a.step_ns, b.step_ns);
  EXPECT_EQ(a.memory.total(), b.memory.total());
}

TEST(TrainStep, StragglerAndDegradedLinkSlowTheStep) {
  const hw::SystemSpec sys = hw::load_system("trn1.32xlarge");
  const TrainStep base = train_step(testing::llama2_7b(), llama7b_config(), sys, fake_factory());
  TrainConditions slow;
  slow.straggler_slowdown = 1.2;
  const TrainStep s = train_step(testing::llama2_7b(), llama7b_config(), sys, fake_factory(), slow);
  EXPECT_NEAR(s.compute_ns, 1.2 * base.compute_ns, 1e-6 * base.compute_ns);
  TrainConditions link;
  link.degraded_link = 0.01;
  const TrainStep d = train_step(testing::llama2_7b(), llama7b_config(), sys, fake_factory(), link);
  EXPECT_GT(d.exposed_comm_ns, base.exposed_comm_ns);
}


// Context-parallel K/V rings and expert-parallel all-to-alls are charged per byte (HBM at both
// ends, a NeuronLink traversal, or EFA for the share that leaves a node), from the closed forms
// of their traffic: 3 (cp-1)-hop rings of a rank's K and V per layer, 4 all-to-alls of
// (ep-1)/ep of a rank's routed tokens per MoE layer, every micro-batch, on every rank.
TEST(TrainStep, ContextAndExpertParallelTrafficEnergy) {
  const hw::SystemSpec sys = hw::load_system("trn1.32xlarge");
  const double hbm = sys.chip.energy.hbm_per_byte.value(), link = sys.chip.energy.link_per_byte.value();
  const double efa = sys.energy.scale_out_per_byte.value();
  const ModelDesc dense = testing::llama2_7b();
  TrainConfig c = llama7b_config();
  c.cp = 2;
  const TrainStep s = train_step(dense, c, sys, fake_factory());
  const double m = double(s.layout.micro_batches), ranks = s.layout.ranks;  // 32, 512
  const double kv = 4096.0 / 2 * 2 * 32 * 128 * 2 / 8;  // a rank's K and V of its half of the sequence, bf16
  const double cp_bytes = m * 3 * 1 * kv * 32 * ranks;
  EXPECT_NEAR(s.cp_bytes, cp_bytes, 1e-9 * cp_bytes);
  EXPECT_NEAR(s.cp_energy[EnergyUnit::HBM], 2 * cp_bytes * hbm, 1e-9 * cp_bytes * hbm);
  EXPECT_NEAR(s.cp_energy[EnergyUnit::NeuronLink], cp_bytes * link, 1e-9 * cp_bytes * link);  // a ring inside a node
  EXPECT_EQ(s.cp_energy[EnergyUnit::EFA], 0);
  EXPECT_EQ(s.ep_bytes, 0);
  EXPECT_GE(s.energy[EnergyUnit::NeuronLink], s.cp_energy[EnergyUnit::NeuronLink]);

  ModelDesc moe = dense;
  moe.moe.experts = 8, moe.moe.experts_per_token = 2, moe.moe.expert_intermediate = 2048;
  for (int ep : {2, 8}) {  // 2: inside a node; 8 ranks 8 apart: 2 nodes of 4
    TrainConfig e = llama7b_config();
    e.ep = ep;
    const TrainStep t = train_step(moe, e, sys, fake_factory());
    const double buffer = 4096.0 / 8 * 2 * 4096 * 2;  // a rank's routed tokens (top-2), bf16
    const double bytes = double(t.layout.micro_batches) * 32 * 4 * (ep - 1.0) / ep * buffer * t.layout.ranks;
    EXPECT_NEAR(t.ep_bytes, bytes, 1e-9 * bytes) << "ep " << ep;
    const double across = ep == 2 ? 0.0 : bytes * 4 / 7;  // peers on the other node: 4 of 7
    EXPECT_NEAR(t.ep_energy[EnergyUnit::HBM], 2 * bytes * hbm, 1e-9 * bytes * hbm);
    EXPECT_NEAR(t.ep_energy[EnergyUnit::EFA], across * efa, 1e-9 * bytes * efa);
    EXPECT_NEAR(t.ep_energy[EnergyUnit::NeuronLink], (bytes - across) * link, 1e-9 * bytes * link);
  }
}

}  // namespace
}  // namespace trnsim::workloads
