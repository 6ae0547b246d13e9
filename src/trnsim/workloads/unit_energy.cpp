#include "trnsim/workloads/unit_energy.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"

namespace trnsim::workloads {

const char* energy_unit_name(EnergyUnit u) {
  static constexpr const char* kNames[kEnergyUnits] = {"TensorE",    "VectorE", "ScalarE", "GpSimd", "DMA",    "HBM",
                                                       "NeuronLink", "switch",  "EFA",     "SM",     "NVLink", "static"};
  return kNames[static_cast<int>(u)];
}

double UnitEnergy::total() const {
  double s = 0;
  for (double v : j) s += v;
  return s;
}

UnitEnergy& UnitEnergy::operator+=(const UnitEnergy& o) {
  for (int i = 0; i < kEnergyUnits; ++i) j[i] += o.j[i];
  return *this;
}

UnitEnergy& UnitEnergy::operator*=(double k) {
  for (double& v : j) v *= k;
  return *this;
}

nlohmann::json UnitEnergy::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (int i = 0; i < kEnergyUnits; ++i)
    if (j[i] != 0 || i == static_cast<int>(EnergyUnit::Static)) out[energy_unit_name(static_cast<EnergyUnit>(i))] = j[i];
  return out;
}

UnitEnergy UnitEnergy::dynamic_of(const std::map<std::string, double>& by_unit) {
  UnitEnergy e;
  for (const auto& [name, v] : by_unit) {
    if (name == "static") continue;
    bool found = false;
    for (int i = 0; i < kEnergyUnits && !found; ++i)
      if (name == energy_unit_name(static_cast<EnergyUnit>(i))) e.j[i] += v, found = true;
    if (!found) throw Error(fmt::format("energy: unit '{}' of a run has no place in UnitEnergy", name));
  }
  return e;
}

}  // namespace trnsim::workloads
