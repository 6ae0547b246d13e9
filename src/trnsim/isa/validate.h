// The hardware's shape, capacity and dtype rules for one instruction on one core. Each
// violation throws ShapeError or UnsupportedError naming the instruction and the limit.
#pragma once
#include "trnsim/hw/chip_spec.h"
#include "trnsim/isa/program.h"

namespace trnsim::isa {

// Checks the instruction as it would run on `engine` of a core with `core` spec (partition
// count and start rules, SBUF/PSUM bounds, PSUM bank width, matmul sizes, TensorE dtypes,
// sparsity support, Vector/Scalar free-size limits, HBM tensor bounds).
void validate(const Instruction& ins, Engine engine, const hw::ChipSpec& chip,
              const Program& program);

// Every instruction of the program, plus semaphore ids in range.
void validate(const Program& program, const hw::ChipSpec& chip);

}  // namespace trnsim::isa
