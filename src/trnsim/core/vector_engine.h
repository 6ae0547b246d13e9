// VectorE: element-wise arithmetic, free-axis reductions, copies/casts, select, batch-norm
// statistics and memset over the partition lanes.
//
// Cost (NKI ISA pages) in engine cycles, N = free elements per partition, MIN_II =
// fixed_overhead_cycles, N scaled by 128 / elems_per_cycle where the engine is wider:
//   tensor_scalar, tensor_copy, select, bn_stats   max(MIN_II, N)
//   tensor_tensor     max(MIN_II, N) for 16-bit contiguous add/sub/mul or a PSUM+SBUF pair,
//                     else max(MIN_II, 2N)
//   tensor_reduce     N/2 for bf16 add/max, else N (at least MIN_II)
//   divide            8N (the reciprocal rate; iterative on VectorE)
//   bn_aggr           13N/3
//   memset            N/2 for zero in bf16/fp16, else N
// and N doubles for an operand whose innermost stride is over 16 bytes (half bandwidth).
#pragma once
#include "trnsim/core/unit.h"
#include "trnsim/hw/chip_spec.h"

namespace trnsim::core {

// Work cycles of a Vector-class instruction on an engine with spec `e` (also used when such
// an instruction runs on GpSimd or ScalarE).
double vector_cycles(const isa::Op& op, const hw::EngineSpec& e);

// The functional semantics of every Vector/Scalar/GpSimd instruction on a core (fast path).
void execute_engine_op(const isa::Op& op, NeuronCore& core);

class VectorEngine : public Unit {
 public:
  using Unit::Unit;
 protected:
  sim::Time begin(const isa::Instruction& ins, sim::Time t) override;
};

}  // namespace trnsim::core
