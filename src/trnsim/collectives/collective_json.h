// The JSON form of a timed collective, shared by `trnsim collective --json` and
// trnsim.collective() so the two can never disagree: unit-suffixed fields (size_bytes, time_s,
// algbw_gbps, busbw_gbps, fixed_s) plus op, system, systems, ranks, dtype, count, algorithm, steps.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "trnsim/collectives/collective.h"

namespace trnsim::collectives {

nlohmann::json to_json(const CollectiveResult& r, const std::string& system, int systems, numerics::DType dtype);

}  // namespace trnsim::collectives
