// Energy by unit kind of a step, a pass or a whole run of an LLM workload: the chips' engines
// and HBM (from timing-mode runs of the nodes, core::RunResult::energy_by_unit), the fabric
// (collectives' fabric::LinkEnergy), a GPU's SMs and NVLink (gpu_step_cost.h) and static power
// over the wall time. A fixed array, cheap to add thousands of times per serving run.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace trnsim::workloads {

enum class EnergyUnit : uint8_t {
  TensorE, VectorE, ScalarE, GpSimd, DMA, HBM,  // a Trainium chip's units (dynamic)
  NeuronLink, Switch, EFA,                      // the fabric (collectives)
  SM, NVLink,                                   // a GPU's compute and scale-up links
  Static,                                       // chips' static power over the wall time
  kCount
};
inline constexpr int kEnergyUnits = static_cast<int>(EnergyUnit::kCount);
const char* energy_unit_name(EnergyUnit u);  // "TensorE", ..., "switch", "EFA", "static"

struct UnitEnergy {
  std::array<double, kEnergyUnits> j{};  // joules per unit
  double& operator[](EnergyUnit u) { return j[static_cast<int>(u)]; }
  double operator[](EnergyUnit u) const { return j[static_cast<int>(u)]; }
  double total() const;
  double dynamic() const { return total() - (*this)[EnergyUnit::Static]; }
  UnitEnergy& operator+=(const UnitEnergy& o);
  UnitEnergy& operator*=(double k);
  friend UnitEnergy operator+(UnitEnergy a, const UnitEnergy& b) { return a += b; }
  friend UnitEnergy operator-(UnitEnergy a, const UnitEnergy& b) { return a += b * -1.0; }
  friend UnitEnergy operator*(UnitEnergy a, double k) { return a *= k; }
  // Units with energy, and "static" always: {"TensorE": J, ...}; the values sum to total().
  nlohmann::json to_json() const;
  // From core::RunResult::energy_by_unit / runtime::Report::energy_by_unit_j, without static
  // (a node's run charges the whole chip's static power; the caller charges it per wall time).
  static UnitEnergy dynamic_of(const std::map<std::string, double>& by_unit);
};

}  // namespace trnsim::workloads
