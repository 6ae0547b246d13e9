// The summary as a terminal table. Figures get human units (us/ms, KiB/MiB/GiB); DMA queues are
// folded into one row per core, since sixteen nearly identical rows hide the compute engines.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "trnsim/report/summary.h"

namespace trnsim::report {
namespace {

std::string human_time(double s) {
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  if (s >= 1e-6) return fmt::format("{:.3f} us", s * 1e6);
  return fmt::format("{:.1f} ns", s * 1e9);
}

std::string human_bytes(double b) {
  if (b >= kGiB) return fmt::format("{:.2f} GiB", b / kGiB);
  if (b >= kMiB) return fmt::format("{:.2f} MiB", b / kMiB);
  if (b >= kKiB) return fmt::format("{:.2f} KiB", b / kKiB);
  return fmt::format("{:.0f} B", b);
}

std::string human_flops(double f) {
  if (f >= 1e12) return fmt::format("{:.3f} TFLOP", f * 1e-12);
  if (f >= 1e9) return fmt::format("{:.3f} GFLOP", f * 1e-9);
  return fmt::format("{:.3f} MFLOP", f * 1e-6);
}

}  // namespace

std::string format_table(const RunSummary& s) {
  std::string o;
  auto row = [&o](std::string_view k, const std::string& v) { o += fmt::format("  {:<14}{}\n", k, v); };
  o += fmt::format("{} on {} ({} core{})\n", s.program, s.chip, s.cores_used, s.cores_used == 1 ? "" : "s");
  row("time", human_time(s.time_s));
  if (s.has_matmul) {
    row("TensorE", fmt::format("{} at {:.2f} TFLOPS = {:.1f}% of {:.2f} ({} peak, clock-derived)",
                               human_flops(s.tensor_flops), s.tflops, 100 * s.peak_fraction,
                               s.peak_tflops, numerics::name(s.matmul_dtype)));
  } else {
    row("TensorE", "no matmul");
  }
  row("HBM", fmt::format("{} at {:.1f} GB/s = {:.1f}% of {:.0f} GB/s reachable (DMA {:.0f}, HBM {:.0f})",
                         human_bytes(s.hbm_bytes), s.bandwidth_gbps, 100 * s.bandwidth_fraction,
                         std::min(s.dma_bandwidth_gbps, s.hbm_bandwidth_gbps), s.dma_bandwidth_gbps,
                         s.hbm_bandwidth_gbps));
  if (s.has_matmul)
    row("roofline", fmt::format("{:.1f} FLOP/B vs knee {:.1f} -> {}-bound", s.arithmetic_intensity,
                                s.roofline_knee, s.bound));
  if (s.energy.modelled) {
    std::string parts;
    for (const auto& [k, v] : s.energy.by_unit_j)
      if (v > 0) parts += fmt::format("{}{} {:.1f}%", parts.empty() ? "" : ", ", k, 100 * v / s.energy.energy_j);
    row("energy", fmt::format("{:.4g} J, {:.1f} W average, {:.1f} W peak ({})", s.energy.energy_j,
                              s.energy.average_power_w, s.energy.peak_power_w, parts));
  }
  std::string counts;
  for (const auto& [op, n] : s.opcode_counts) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", op, n);
  row("instructions", fmt::format("{} ({})", s.instructions, counts));

  o += fmt::format("\n  {:<22}{:>12}{:>9}{:>10}\n", "unit", "busy", "util", "instr");
  int cores = 0;
  for (const auto& u : s.units) cores = std::max(cores, u.core + 1);
  for (int core = 0; core < cores; ++core) {
    double dma_busy = 0;
    uint64_t dma_instr = 0;
    int queues = 0;
    for (const auto& u : s.units) {
      if (u.core != core) continue;
      if (u.engine == isa::Engine::Dma) {
        dma_busy += u.busy_s;
        dma_instr += u.instructions;
        ++queues;
        continue;
      }
      o += fmt::format("  {:<22}{:>12}{:>8.1f}%{:>10}\n", fmt::format("core{} {}", core, isa::engine_name(u.engine)),
                       human_time(u.busy_s), 100 * u.utilisation, u.instructions);
    }
    if (queues > 0) {
      // util: any queue busy (needs the records); busy: the queues' mean.
      const double mean = s.time_s > 0 ? 100 * dma_busy / queues / s.time_s : 0.0;
      const bool any = core < static_cast<int>(s.dma_active.size());
      o += fmt::format("  {:<22}{:>12}{:>9}{:>10}   ({}queues avg {:.1f}%)\n",
                       fmt::format("core{} DMA x{}", core, queues), human_time(dma_busy / queues),
                       any ? fmt::format("{:.1f}%", 100 * s.dma_active[core]) : "n/a", dma_instr,
                       any ? "util: any queue busy; " : "", mean);
    }
  }
  return o;
}

}  // namespace trnsim::report
