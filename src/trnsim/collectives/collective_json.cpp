#include "trnsim/collectives/collective_json.h"

#include "trnsim/numerics/dtype.h"

namespace trnsim::collectives {

nlohmann::json to_json(const CollectiveResult& r, const std::string& system, int systems, numerics::DType dtype) {
  return {{"kind", "collective"},  // what `trnsim report` draws it as
          {"op", std::string(name(r.op))},
          {"system", system},
          {"systems", systems},
          {"ranks", r.ranks},
          {"dtype", std::string(numerics::name(dtype))},
          {"size_bytes", r.size_bytes},
          {"count", r.count},
          {"time_s", r.time_s},
          {"algbw_gbps", r.algbw_gbps},
          {"busbw_gbps", r.busbw_gbps},
          {"algorithm", r.algorithm},
          {"steps", r.steps},
          {"fixed_s", r.fixed_s},
          {"energy_j", r.energy_by_unit_j.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.energy_j)},
          {"average_power_w", r.energy_by_unit_j.empty() || r.time_s <= 0 ? nlohmann::json(nullptr) : nlohmann::json(r.energy_j / r.time_s)},
          {"peak_power_w", r.energy_by_unit_j.empty() || r.time_s <= 0 ? nlohmann::json(nullptr) : nlohmann::json(r.energy_j / r.time_s)},
          {"energy_by_unit_j", r.energy_by_unit_j.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.energy_by_unit_j)}};
}

}  // namespace trnsim::collectives
