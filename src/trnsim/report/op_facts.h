// Facts about one instruction that the profiler shows and isa/ does not already provide:
// the dtype it produces and the bytes it moves through HBM.
#pragma once
#include <optional>

#include "trnsim/isa/instruction.h"

namespace trnsim::report {

// The dtype of the instruction's result (Matmul: of its stationary input, the one that sets
// the TensorE rate; Dma: of the destination). None for Nop.
std::optional<numerics::DType> op_dtype(const isa::Op& op);

// Bytes the instruction reads from or writes to HBM (a DMA with an HBM end; HBM to HBM counts
// both ends). Zero for everything that stays on chip.
double op_hbm_bytes(const isa::Op& op);

}  // namespace trnsim::report
