#include "trnsim/core/dma_queue.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "trnsim/core/chip.h"
#include "trnsim/core/neuron_core.h"

namespace trnsim::core {

using isa::AccessPattern;
using sim::Time;

namespace {
constexpr uint64_t kStartFlow = 1;

double run_bytes(const AccessPattern& a) {
  return static_cast<double>(std::min(a.contiguous_run(), a.free_size()) * a.element_bytes());
}
}  // namespace

double dma_efficiency(double b, const hw::DmaSpec& spec) {
  const double o = spec.efficient_bytes_per_partition.value() / 8.0;
  const double sat = spec.saturating_bytes_per_partition.value();
  if (b <= 0) return 1.0;
  return std::min(1.0, b / (b + o) * (sat + o) / sat);
}

DmaCost dma_cost(const isa::Dma& d, const hw::DmaSpec& spec) {
  DmaCost c;
  c.bytes = static_cast<double>(d.dst.bytes());
  c.uses_hbm = d.src.space == isa::Space::HBM || d.dst.space == isa::Space::HBM;
  // Engines: those serving the on-chip side's partitions (the destination if both are).
  const AccessPattern* chip_side = d.dst.space != isa::Space::HBM ? &d.dst
                                   : d.src.space != isa::Space::HBM ? &d.src : nullptr;
  const int ppe = std::max(1, spec.partitions_per_engine);
  if (chip_side) {
    int first = chip_side->start_partition / ppe;
    int last = (chip_side->start_partition + chip_side->partitions - 1) / ppe;
    c.engines = std::min(spec.engines, last - first + 1);
  } else {
    c.engines = spec.engines;
  }
  c.efficiency = dma_efficiency(std::min(run_bytes(d.src), run_bytes(d.dst)), spec);
  c.peak_gbps = c.engines * spec.bandwidth_per_engine.value() * c.efficiency;
  return c;
}

Time DmaQueue::begin(const isa::Instruction& ins, Time t) {
  if (!std::holds_alternative<isa::Dma>(ins.op)) return t;  // a Nop: semaphores only
  const auto& d = std::get<isa::Dma>(ins.op);
  if (d.indirect) {
    if (chip_.functional()) {
      // Copied out first: the row copies below reuse the read slots.
      const float* read = core_.read(d.index, 0);
      const std::vector<float> index(read, read + d.dst.partitions);
      for (int p = 0; p < d.dst.partitions; ++p)
        core_.copy(isa::gathered_row(d, isa::checked_row(d, index[p], p)), d.dst.with_partitions(p, 1));
    }
    // Costed as a copy of that many rows: one descriptor per row, so the row length sets the
    // efficiency (an embedding row of 384 fp32 is 1.5 KiB per descriptor).
    isa::Dma rows{d.dst, isa::gathered_row(d, 0)};
    pending_ = dma_cost(rows, core_.spec().dma);
  } else {
    if (chip_.functional()) core_.copy(d.src, d.dst);
    pending_ = dma_cost(d, core_.spec().dma);
  }
  chip_.queue().schedule(t + Time::from(core_.spec().dma.fixed_overhead, "core.dma.fixed_overhead"), this, kStartFlow);
  return Time::max();
}

void DmaQueue::on_event(Time now, uint64_t arg) {
  if (arg != kStartFlow) return Unit::on_event(now, arg);
  auto& net = chip_.network();
  const uint64_t tag = reinterpret_cast<uint64_t>(this);
  if (pending_.uses_hbm)
    net.start_flow(pending_.bytes, {core_.dma_resource(), chip_.hbm_resource()}, GBps(pending_.peak_gbps), tag);
  else
    net.start_flow(pending_.bytes, {core_.dma_resource()}, GBps(pending_.peak_gbps), tag);
}

}  // namespace trnsim::core
