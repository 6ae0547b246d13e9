#include "trnsim/core/gpsimd_engine.h"

#include <vector>

#include "trnsim/core/chip.h"
#include "trnsim/core/neuron_core.h"
#include "trnsim/core/vector_engine.h"

namespace trnsim::core {

using sim::Time;

double gpsimd_cycles(const isa::Op& op, const hw::GpSimdSpec& g) {
  auto N = [](const isa::AccessPattern& a) { return static_cast<double>(a.free_size()); };
  if (auto* o = std::get_if<isa::Iota>(&op)) return kGpSimdFixedCycles + N(o->out);
  if (auto* o = std::get_if<isa::Gather>(&op)) return kGpSimdFixedCycles + N(o->out);
  if (auto* o = std::get_if<isa::PartitionReduce>(&op)) return kGpSimdFixedCycles + N(o->in);
  if (auto* o = std::get_if<isa::PartitionBroadcast>(&op)) return kGpSimdFixedCycles + N(o->out);
  hw::EngineSpec e;  // the SIMD cores seen as lanes: cores x simd_bits/32 fp32 per cycle
  e.clock = g.clock;
  e.lanes = 128;
  e.elems_per_cycle_other = g.cores * g.simd_bits / 32.0;
  e.elems_per_cycle_16bit = e.elems_per_cycle_other;
  e.fixed_overhead_cycles = 64;
  return vector_cycles(op, e);
}

void execute_gpsimd_op(const isa::Op& op, NeuronCore& core) {
  if (auto* o = std::get_if<isa::Iota>(&op)) {
    const auto& ap = o->out;
    const int64_t F = ap.free_size();
    float* r = core.scratch(static_cast<size_t>(ap.elements()), 3);
    for (int p = 0; p < ap.partitions; ++p)
      for (int64_t i = 0; i < F; ++i) {
        int64_t v = o->base + static_cast<int64_t>(o->partition_multiplier) * p, rem = i;
        for (int d = ap.ndims - 1; d >= 0; --d) {
          v += o->free_multiplier[d] * (rem % ap.dims[d].count);
          rem /= ap.dims[d].count;
        }
        r[p * F + i] = static_cast<float>(v);
      }
    core.write(ap, r);
  } else if (auto* o = std::get_if<isa::PartitionReduce>(&op)) {
    const int64_t F = o->in.free_size();
    float* a = core.read(o->in, 0);
    std::vector<float> r(F, isa::alu_identity(o->op));
    for (int p = 0; p < o->in.partitions; ++p)
      for (int64_t i = 0; i < F; ++i) r[i] = isa::alu_apply(o->op, r[i], a[p * F + i]);
    core.write(o->out, r.data());
  } else if (auto* o = std::get_if<isa::PartitionBroadcast>(&op)) {
    const int64_t F = o->in.free_size();
    float* a = core.read(o->in, 0);
    float* r = core.scratch(static_cast<size_t>(o->out.elements()), 3);
    for (int p = 0; p < o->out.partitions; ++p)
      for (int64_t i = 0; i < F; ++i) r[p * F + i] = a[i];
    core.write(o->out, r);
  } else if (auto* o = std::get_if<isa::Gather>(&op)) {
    const int64_t Fi = o->in.free_size(), Fo = o->out.free_size();
    float* a = core.read(o->in, 0);
    float* idx = core.read(o->index, 1);
    float* r = core.scratch(static_cast<size_t>(o->out.elements()), 3);
    for (int p = 0; p < o->out.partitions; ++p)
      for (int64_t j = 0; j < Fo; ++j) {
        float fi = idx[p * Fo + j];
        int64_t k = static_cast<int64_t>(fi);
        r[p * Fo + j] = (fi >= 0 && k < Fi) ? a[p * Fi + k] : NAN;
      }
    core.write(o->out, r);
  }
}

Time GpSimdEngine::begin(const isa::Instruction& ins, Time t) {
  const auto& g = core_.spec().gpsimd;
  if (chip_.functional()) execute_engine_op(ins.op, core_);
  return t + Time::cycles(gpsimd_cycles(ins.op, g), g.clock, "a GpSimd instruction (its cycles over core.gpsimd.clock)");
}

}  // namespace trnsim::core
