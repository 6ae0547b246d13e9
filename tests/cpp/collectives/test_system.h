// Hand-built systems for closed-form tests: round numbers, and a collective DMA path wide
// enough (1,000 GB/s per engine) that the links are what a test measures.
#pragma once
#include "trnsim/hw/chip_spec.h"

namespace trnsim::test {

inline hw::SystemSpec make_system(std::string kind, std::vector<int> dims, double bw_per_chip, int chips,
                                  double link_latency_ns = 1000, double dma_engine_gbps = 1000) {
  hw::SystemSpec s;
  s.name = "test-" + kind;
  s.chip.name = "testchip";
  s.chip.neuron_cores = 1;
  s.chip.collective_cores = 16;
  s.chip.core.dma.bandwidth_per_engine = GBps(dma_engine_gbps);
  s.chip.core.dma.fixed_overhead = Nanoseconds(1300);
  s.chip.core.dma.descriptor_overhead = Nanoseconds(600);
  s.chip.core.dma.saturating_bytes_per_partition = Bytes(4096);
  s.chip.core.sbuf.partitions = 128;
  s.chip.core.vector.clock = GHz(1.0);
  s.chip.core.vector.elems_per_cycle_16bit = 128;
  s.chip.core.vector.elems_per_cycle_other = 128;
  s.chips = chips;
  s.chips_per_instance = chips;
  s.topology.kind = std::move(kind);
  s.topology.dims = std::move(dims);
  s.topology.bandwidth_per_chip = GBps(bw_per_chip);
  s.topology.link_latency = Nanoseconds(link_latency_ns);
  s.scale_out.kind = "efa";
  s.scale_out.bandwidth_per_instance = GBps(100);
  s.scale_out.latency = Nanoseconds(10000);
  return s;
}

}  // namespace trnsim::test
