#include "trnsim/core/scalar_engine.h"

#include "trnsim/core/chip.h"
#include "trnsim/core/neuron_core.h"
#include "trnsim/core/vector_engine.h"

namespace trnsim::core {

using sim::Time;

void execute_activation(const isa::Activation& a, NeuronCore& core) {
  const int64_t F = a.out.free_size();
  float* x = core.read(a.in, 0);
  float* y = core.scratch(static_cast<size_t>(a.out.elements()), 3);
  for (int p = 0; p < a.out.partitions; ++p) {
    const float sc = core.scalar(a.scale, p), b = core.scalar(a.bias, p);
    for (int64_t i = 0; i < F; ++i) y[p * F + i] = isa::act_apply(a.func, x[p * F + i] * sc + b);
  }
  core.write(a.out, y);
  if (a.has_accum) {
    // The sum is of the values as stored (rounded to the output dtype).
    float* stored = core.read(a.out, 1);
    std::vector<float> acc(a.out.partitions);
    for (int p = 0; p < a.out.partitions; ++p) {
      double s = 0;
      for (int64_t i = 0; i < F; ++i) s += stored[p * F + i];
      acc[p] = static_cast<float>(s);
    }
    core.write(a.accum, acc.data());
  }
}

Time ScalarEngine::begin(const isa::Instruction& ins, Time t) {
  const auto& spec = core_.spec().scalar;
  if (chip_.functional()) execute_engine_op(ins.op, core_);
  return t + Time::cycles(vector_cycles(ins.op, spec), spec.clock, "a ScalarE instruction (its cycles over core.scalar.clock)");
}

}  // namespace trnsim::core
