// What owning a system costs (`tco:` in configs/systems and configs/gpus system files): capital
// per chip, per server and per server's share of the network, and yearly maintenance. No vendor
// publishes these; every preset value is an estimate and says so. Read by analysis/tco.h.
#pragma once
#include "trnsim/common/units.h"
#include "trnsim/hw/yaml_fields.h"

namespace trnsim::hw {

struct TcoSpec {
  bool modelled = false;
  Usd capex_per_chip;               // one accelerator (GPU / Trainium chip with its HBM)
  Usd capex_per_instance;           // the server around the chips: CPUs, memory, chassis, power
  Usd network_per_instance;         // NICs, optics and switch ports of one server
  double maintenance_per_year = 0;  // fraction of capex per year (support, spares, repairs)
};

TcoSpec read_tco(YamlMap m);

}  // namespace trnsim::hw
