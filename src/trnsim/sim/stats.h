// Per-unit statistics accumulated during a run: busy time, instruction count, work.
#pragma once
#include <cstdint>

#include "trnsim/sim/time.h"

namespace trnsim::sim {

struct UnitCounters {
  int64_t busy_ps = 0;
  uint64_t instructions = 0;
  double flops = 0;
  int64_t bytes = 0;
  double energy_j = 0;  // dynamic energy of the unit's instructions (core/energy_model.h)
  void add(Time start, Time end, double f, int64_t b) {
    busy_ps += (end - start).ps();
    ++instructions;
    flops += f;
    bytes += b;
  }
  double utilisation(Time total) const {
    return total.ps() > 0 ? static_cast<double>(busy_ps) / static_cast<double>(total.ps()) : 0.0;
  }
};

}  // namespace trnsim::sim
