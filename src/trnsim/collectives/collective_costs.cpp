// Collective cost parameters, each with its source. Two are not published and are fitted to the
// nccom-test 2-rank all-reduce on trn1 (HARDWARE.md; see docs/collectives.md for the fit and
// the reasoning): the launch overhead (small-message floor) and the CC data-path bandwidth
// (large-message asymptote). They are global, not per size; every other number comes from the
// chip spec. The chip YAML loader accepts only its declared keys, so these live here until the
// chip schema grows a `collectives:` section.
#include "trnsim/collectives/collective_costs.h"

#include <fmt/format.h>

#include <algorithm>

#include "trnsim/common/error.h"

namespace trnsim::collectives {
namespace {

// Fitted: nccom-test's 1 KiB all-reduce (58 us) is almost all fixed cost; what the per-step
// costs below do not explain is the launch of the collective (runtime call, CC program start).
// 45 us balances the 1 KiB and 1 MiB points (-14% / +3%); no public figure exists.
constexpr double kLaunchNs = 45'000;

// Fitted: at 1 GiB two ranks on one trn1 chip sustain 52.83 GiB/s each (busbw) = 113.6 GB/s for
// the chip, far below NeuronLink (384 GB/s), HBM (880 GB/s) and the cores' 32 DMA engines
// (544 GB/s). It matches 6 CC cores x 18.9 GB/s, i.e. each CC core driving one DMA ring at 1.115
// times the 17 B/ns engine peak. We carry that per-CC-core ratio to other chips through their own
// CC-core count and DMA engine peak (trn2: 16 x 23 GB/s x 1.115 = 410 GB/s per chip).
constexpr double kCcCoreBandwidthInDmaEngines = 1.115;

// Estimate: the CC core's own per-step work (wait on semaphores, compute the next addresses,
// queue descriptors), a few hundred instructions of a small control core. No public figure.
constexpr double kCcStepNs = 500;

// Fitted (docs/llm.md, Calibration): the least time a step whose transfers leave the chip takes,
// the step's handshake across the fabric (the receiver's buffer credit to the sender, the data,
// the completion semaphore back to the receiver's polling CC core). It runs concurrently with the
// step's set-up and data, so it binds only on steps that carry little data: the 22 chip-to-chip
// steps of a 1-4 MiB in-program all-reduce on inf2 (24 ranks). The short-prompt prefills of the
// 7B/8B models on inf2 (TTFT 25-29 ms) imply ~275-320 us per 1 MiB all-reduce there, i.e.
// 12-14 us per step; 12 us. A mesh step (8-11 descriptor rounds, hops) already takes longer. No
// public figure.
constexpr double kCrossChipStepNs = 12'000;

}  // namespace

CollectiveCosts collective_costs(const hw::SystemSpec& sys, numerics::DType dtype, int ranks_per_chip, Launch launch) {
  const hw::ChipSpec& chip = sys.chip;
  const hw::DmaSpec& dma = chip.core.dma;
  if (chip.collective_cores < 1 || !(dma.bandwidth_per_engine.value() > 0))
    throw ConfigError(fmt::format("{}: collectives need collective_cores >= 1 and a DMA bandwidth_per_engine",
                                  chip.source_file.empty() ? chip.name : chip.source_file));
  CollectiveCosts c;
  // In a compiled program the collective starts with one semaphore hop from the compute engine
  // to the CC core ([dma] ~1,300 ns cross-engine semaphore latency); the per-step costs below
  // (handshake, CC step, descriptors) are the same as standalone.
  c.launch = launch == Launch::InProgram ? dma.fixed_overhead : Nanoseconds(kLaunchNs);
  // [dma] ~1,300 ns fixed cross-engine overhead per transfer: the completion semaphore that
  // follows the data and the receiver's wait on it, once per step.
  c.sync_handshake = dma.fixed_overhead;
  c.cc_step = Nanoseconds(kCcStepNs);
  c.cross_chip_step = Nanoseconds(kCrossChipStepNs);
  // [dma] ~600 ns per hardware-generated descriptor DMA instruction.
  c.descriptor_setup = dma.descriptor_overhead;
  // Each CC core drives one DMA ring; a chip's CC cores are split among its ranks.
  c.dma_rings_per_rank = std::max(1, chip.collective_cores / std::max(1, ranks_per_chip));
  c.chip_dma_bandwidth = dma.bandwidth_per_engine * (chip.collective_cores * kCcCoreBandwidthInDmaEngines);
  // The receiver adds on VectorE: an elementwise add of two tensors costs N cycles per partition
  // for 16-bit floats and 2N otherwise ([nki] tensor_tensor), on `lanes` partitions.
  const auto& v = chip.core.vector;
  const bool narrow = numerics::info(dtype).bits <= 16;
  const double per_cycle = narrow ? v.elems_per_cycle_16bit : v.elems_per_cycle_other / 2.0;
  c.reduce_elems_per_ns = v.clock.value() * per_cycle;
  if (!(c.reduce_elems_per_ns > 0))
    throw ConfigError(fmt::format("{}: collectives need a VectorE clock to reduce", chip.name));
  // [dma] a transfer reaches peak at >= 4 KiB per partition: 128 partitions x 4 KiB = 512 KiB is
  // the smallest piece the CC pipelines at full rate.
  c.pipeline_chunk = dma.saturating_bytes_per_partition.value() > 0
                         ? dma.saturating_bytes_per_partition * chip.core.sbuf.partitions
                         : Bytes(512 * 1024);
  return c;
}

}  // namespace trnsim::collectives
