#include "trnsim/workloads/train_layer_cost.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/workloads/train_kernel_cost.h"

namespace trnsim::workloads {

PassCost operator+(PassCost a, const PassCost& b) {
  a.matmul += b.matmul, a.attention += b.attention, a.collective += b.collective, a.other += b.other;
  for (int i = 0; i < 4; ++i) a.energy[i] += b.energy[i];
  return a;
}
PassCost operator*(PassCost a, double k) {
  a.matmul *= k, a.attention *= k, a.collective *= k, a.other *= k;
  for (auto& e : a.energy) e *= k;
  return a;
}

namespace {

// The step's dynamic energy by category: the fabric's units to the collectives, the rest
// shared by the compute categories' times (a StepCost has no per-category energy).
PassCost from(const StepCost& s) {
  PassCost p{s.matmul.value(), s.attention.value(), s.collective.value(), s.other.value()};
  UnitEnergy rest = s.energy_by_unit;
  rest[EnergyUnit::Static] = 0;
  for (EnergyUnit u : {EnergyUnit::NeuronLink, EnergyUnit::Switch, EnergyUnit::EFA, EnergyUnit::NVLink})
    p.energy[2][u] = rest[u], rest[u] = 0;
  const double t = p.matmul + p.attention + p.other;
  const double share[4] = {p.matmul, p.attention, 0, p.other};
  for (int i : {0, 1, 3}) p.energy[i] = rest * (t > 0 ? share[i] / t : 0.0);
  return p;
}

PassCost minus(const PassCost& a, const PassCost& b) {
  // Clamped: a cost model with a fixed part can give a 2-layer breakdown component a hair
  // below the 1-layer one; negative time (or energy) is not meaningful.
  auto d = [](double x, double y) { return x > y ? x - y : 0.0; };
  PassCost p{d(a.matmul, b.matmul), d(a.attention, b.attention), d(a.collective, b.collective), d(a.other, b.other)};
  for (int i = 0; i < 4; ++i)
    for (int u = 0; u < kEnergyUnits; ++u) p.energy[i].j[u] = d(a.energy[i].j[u], b.energy[i].j[u]);
  return p;
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
  d.clock_scale = c.clock_scale;
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
    // One logical core's kernels, run by each of the tp ranks.
    auto put = [tp = double(c.tp)](PassCost& p, const TrainKernelPass& q) {
      p.matmul = q.matmul.s * 1e9, p.attention = q.attention.s * 1e9, p.other = q.other.s * 1e9;
      p.energy[0] = q.matmul.e * tp, p.energy[1] = q.attention.e * tp, p.energy[3] = q.other.e * tp;
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
  PassCost b{2.0 * f.matmul, 2.5 * f.attention, f.collective, 1.5 * f.other};
  b.energy = {f.energy[0] * 2.0, f.energy[1] * 2.5, f.energy[2], f.energy[3] * 1.5};
  return b;
}

PassCost recompute_of(const PassCost& f, Recompute r) {
  if (r == Recompute::Full) return f;
  if (r == Recompute::Selective) {
    PassCost p{0, f.attention, 0, 0};
    p.energy[1] = f.energy[1];
    return p;
  }
  return {};
}

}  // namespace trnsim::workloads
