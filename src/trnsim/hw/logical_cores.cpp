#include "trnsim/hw/logical_cores.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"

namespace trnsim::hw {

int default_lnc(const ChipSpec& chip) { return chip.neuron_cores >= 8 ? 2 : 1; }

int resolve_lnc(const ChipSpec& chip, int lnc, const std::string& option) {
  if (lnc == 0) return default_lnc(chip);
  // Neuron offers LNC=2 on Trn2/Trn3 only; LNC=1 everywhere.
  if (lnc != 1 && lnc != default_lnc(chip))
    throw ConfigError(fmt::format("{} {}: {} takes {} (physical NeuronCores per logical core)", option, lnc, chip.name,
                                  default_lnc(chip) == 1 ? "only 1" : "1 or 2"));
  return lnc;
}

int logical_cores(const ChipSpec& chip, int lnc) { return chip.neuron_cores / resolve_lnc(chip, lnc); }
int physical_cores(const hw::ChipSpec& chip, int logical_cores, int lnc) {
  const int l = hw::resolve_lnc(chip, lnc);
  const int available = chip.neuron_cores / l;
  if (logical_cores < 0 || logical_cores > available)
    throw ConfigError(fmt::format("--cores {}: {} has {} logical NeuronCores at lnc {} ({} physical)", logical_cores, chip.name, available, l,
                                  chip.neuron_cores));
  return logical_cores * l;
}

}  // namespace trnsim::hw
