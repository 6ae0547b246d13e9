#include "trnsim/hw/tco_spec.h"

namespace trnsim::hw {

TcoSpec read_tco(YamlMap m) {
  TcoSpec t;
  t.modelled = true;
  t.capex_per_chip = m.quantity<Usd>("capex_per_chip");
  t.capex_per_instance = m.quantity<Usd>("capex_per_instance");
  t.network_per_instance = m.quantity<Usd>("network_per_instance");
  t.maintenance_per_year = m.number("maintenance_per_year", -1);
  if (t.maintenance_per_year > 1) m.fail_key("maintenance_per_year", "a fraction of capex per year, at most 1");
  m.done();
  return t;
}

}  // namespace trnsim::hw
