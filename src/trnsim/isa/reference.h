// Reference implementations: every instruction as plain loops over its access patterns, one
// element at a time, through an abstract element memory (DESIGN principle 6). The engines in
// core/ have fast implementations (bulk decode, BLAS); tests hold them to these.
#pragma once
#include <cstdint>

#include "trnsim/isa/instruction.h"

namespace trnsim::isa {

// Element-level access to the memories, implemented by the core model (and by tests).
// `i` is the free index of the pattern (0 <= i < ap.free_size()), p the partition within it.
class ElementMemory {
 public:
  virtual ~ElementMemory() = default;
  virtual float load(const AccessPattern& ap, int p, int64_t i) const = 0;
  // Stores v rounded to ap.dtype (round to nearest even).
  virtual void store(const AccessPattern& ap, int p, int64_t i, float v) = 0;
};

// Executes one instruction (any engine) on mem. Matmul accumulates in fp64 per output element
// before rounding to the PSUM dtype, the most exact answer the hardware could give.
void reference_execute(const Op& op, ElementMemory& mem);

}  // namespace trnsim::isa
