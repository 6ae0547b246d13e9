// The fixed and rate costs of a collective that the network alone does not give, derived from
// the chip spec in one place (collective_costs.cpp, which states the source of every number).
// At small messages these dominate: nccom-test's 1 KiB all-reduce takes 58 us on two ranks.
#pragma once
#include <cstdint>

#include "trnsim/common/units.h"
#include "trnsim/hw/chip_spec.h"

namespace trnsim::collectives {

// How the collective is started. Standalone: its own program launch, as nccom-test measures
// (the fitted launch cost). InProgram: a collective inside a compiled model (a tensor-parallel
// all-reduce between two matmuls): the compute engine hands over to the CC core through one
// cross-engine semaphore, no runtime call or program start.
enum class Launch : uint8_t { Standalone, InProgram };

struct CollectiveCosts {
  Nanoseconds launch;            // once per collective: runtime issue + CC-core program start
  Nanoseconds sync_handshake;    // once per step: the semaphore write that follows the data
  Nanoseconds cc_step;           // once per step: the CC core's own work to set up the step
  Nanoseconds cross_chip_step;   // the least a step with a transfer between chips takes (overlaps the rest)
  Nanoseconds descriptor_setup;  // per DMA transfer a rank issues in a step, per DMA ring
  int dma_rings_per_rank = 1;    // transfers of one rank whose descriptors are set up in parallel
  GBps chip_dma_bandwidth;       // the collective data path of one chip (all its ranks share it)
  double reduce_elems_per_ns = 0;  // receiving-side reduction rate (elements of the dtype)
  Bytes pipeline_chunk;          // transfer and reduction overlap in pieces of this size
};

// For `ranks_per_chip` ranks on each chip of `system`, reducing in `dtype`.
CollectiveCosts collective_costs(const hw::SystemSpec& system, numerics::DType dtype, int ranks_per_chip,
                                 Launch launch = Launch::Standalone);

}  // namespace trnsim::collectives
