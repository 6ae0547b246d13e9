// One decoder layer's element-wise work as Neuron runs it: fused, each group of ops one pass
// over its tiles in SBUF (one HBM load of each input, one store of each output), all groups
// in one program, no kernel per op. Groups (m token rows on the partitions, tiles of 128):
//   norm1     RMSNorm of the layer input x [m, h]
//   rope      q' = q * cos + rot(q) * sin on the layer's local q and k columns [m, qk]
//   norm2     residual h1 = x + attention output, stored, and RMSNorm of h1 (kept in SBUF)
//   swiglu    SiLU(gate) * up [m, i]
//   residual  h2 = h1 + FFN output [m, h]
// norms_only keeps norm1, norm2 and residual (what sequence parallelism shards over tokens).
#pragma once
#include <cstdint>

#include "trnsim/hw/chip_spec.h"
#include "trnsim/isa/program.h"

namespace trnsim::workloads {

isa::Program fused_pointwise_program(const hw::ChipSpec& chip, int cores, int64_t m, int64_t h, int64_t i, int64_t qk,
                                     bool norms_only);

}  // namespace trnsim::workloads
