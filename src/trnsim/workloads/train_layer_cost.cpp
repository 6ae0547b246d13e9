#include "trnsim/workloads/train_layer_cost.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/workloads/train_kernel_cost.h"

namespace trnsim::workloads {

PassCost operator+(PassCost a, const PassCost& b) {
  a.matmul += b.matmul, a.attention += b.attention, a.collective += b.collective, a.other += b.other;
  return a;
}
PassCost operator*(PassCost a, double k) {
  a.matmul *= k, a.attention *= k, a.collective *= k, a.other *= k;
  return a;
}

namespace {

PassCost from(const StepCost& s) {
  return {s.matmul.value(), s.attention.value(), s.collective.value(), s.other.value()};
}

PassCost minus(const PassCost& a, const PassCost& b) {
  // Clamped: a cost model with a fixed part can give a 2-layer breakdown component a hair
  // below the 1-layer one; negative time is not meaningful.
  auto d = [](double x, double y) { return x > y ? x - y : 0.0; };
  return {d(a.matmul, b.matmul), d(a.attention, b.attention), d(a.collective, b.collective), d(a.other, b.other)};
}

StepBatch micro_batch_of(const TrainConfig& c) {
  const int64_t tokens = c.seq / c.cp;
  // Load-balanced context parallelism: a rank's S/cp queries see on average (S - S/cp)/2 earlier
  // keys, so its attention work is 1/cp of the sequence's causal attention.
  const int64_t context = (c.seq - tokens) / 2;
  StepBatch b;
  b.prefills.assign(size_t(c.micro_batch), PrefillChunk{tokens, context});
  return b;
}

PassCost forward(ModelDesc m, int64_t layers, int first_dense, const Deployment& d, const StepBatch& b,
                 const StepCostFactory& factory) {
  m.layers = layers;
  m.moe.first_dense_layers = first_dense;
  return from(factory(m, d)->step(b));
}

}  // namespace

LayerCosts layer_costs(const ModelDesc& model, const TrainConfig& c, const StepCostFactory& factory,
                       const hw::ChipSpec& chip, int cores_per_chip) {
  Deployment d;
  d.system = c.system;
  d.tp = c.tp;
  d.lnc = c.lnc;
  d.dtype = c.dtype;
  // Expert placement is modelled here (all-to-all in train_step); the per-token expert work is
  // the same whichever ranks hold the experts, so the cost model sees the experts unsplit.
  const StepBatch b = micro_batch_of(c);
  LayerCosts out;
  const bool moe = model.moe.experts > 0;
  const PassCost one = forward(model, 1, moe ? 0 : 1, d, b, factory);
  const PassCost two = forward(model, 2, moe ? 0 : 2, d, b, factory);
  out.dense_layer = out.moe_layer = minus(two, one);
  out.ends = minus(one, out.moe_layer);
  if (moe && model.moe.first_dense_layers > 0) {
    ModelDesc dense = model;
    dense.moe = MoeDesc{};
    out.dense_layer = minus(forward(dense, 2, 0, d, b, factory), forward(dense, 1, 0, d, b, factory));
  }
  if (c.compute_cost == "kernel") {
    TrainKernelCosts kc(chip, chip.neuron_cores / cores_per_chip, c.dtype);
    const TrainKernelLayers k = train_kernel_layers(model, c.micro_batch, c.seq, c.cp, c.tp, kc);
    auto put = [](PassCost& p, const TrainKernelPass& q) {
      p.matmul = q.matmul * 1e9, p.attention = q.attention * 1e9, p.other = q.other * 1e9;
    };
    put(out.dense_layer, k.dense_layer);
    put(out.moe_layer, moe ? k.moe_layer : k.dense_layer);
    put(out.ends, k.ends);
  }
  if (!(out.moe_layer.total() > 0))
    throw Error(fmt::format("train: the step-cost model gives {} no per-layer forward time", model.name));
  return out;
}

PassCost backward_of(const PassCost& f) {
  return {2.0 * f.matmul, 2.5 * f.attention, f.collective, 1.5 * f.other};
}

PassCost recompute_of(const PassCost& f, Recompute r) {
  if (r == Recompute::Full) return f;
  if (r == Recompute::Selective) return PassCost{0, f.attention, 0, 0};
  return {};
}

}  // namespace trnsim::workloads
