// A DMA queue: an in-order stream of transfers (HBM<->SBUF, SBUF<->SBUF, PSUM->SBUF). One
// transfer at a time per queue; parallelism comes from using many queues.
//
// Time of a transfer:
//   fixed_overhead (latency: descriptor generation, cross-engine trigger and completion
//   semaphore; consumes no bandwidth)  +  bytes moved through the core's DMA engines and, if
//   HBM is a side, the chip's HBM, both shared max-min fairly with every other transfer in
//   flight (sim::BandwidthNetwork).
// The transfer's own peak is engines x bandwidth_per_engine x efficiency, where the engines are
// those serving its SBUF partitions (8 each) and the efficiency comes from the bytes of one
// descriptor element (the contiguous run per partition): each element costs as much as
// o = efficient_bytes_per_partition / 8 more bytes, normalised so that a run of
// saturating_bytes_per_partition reaches the peak:
//   eff(b) = min(1, b/(b+o) * (sat+o)/sat)    (trn1: 64 B 21%, 512 B 71%, 2 KiB 94%, 4 KiB 100%)
#pragma once
#include "trnsim/core/unit.h"
#include "trnsim/hw/chip_spec.h"

namespace trnsim::core {

struct DmaCost {
  double bytes = 0;        // moved
  int engines = 0;         // DMA engines serving the transfer
  double efficiency = 1;   // of those engines' peak
  double peak_gbps = 0;    // engines x bandwidth x efficiency
  bool uses_hbm = false;
};
DmaCost dma_cost(const isa::Dma& d, const hw::DmaSpec& spec);
double dma_efficiency(double run_bytes, const hw::DmaSpec& spec);

class DmaQueue : public Unit {
 public:
  using Unit::Unit;
  void on_event(sim::Time now, uint64_t arg) override;
  void flow_done(sim::Time now) { complete(now); }

 protected:
  sim::Time begin(const isa::Instruction& ins, sim::Time t) override;

 private:
  DmaCost pending_{};
};

}  // namespace trnsim::core
