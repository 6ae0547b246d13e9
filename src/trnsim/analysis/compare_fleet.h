// Fleet sizing for `trnsim compare`: the fewest replicas whose serving run meets the SLO
// attainment target, by doubling from one replica and then bisecting (O(log N) runs).
#pragma once
#include <nlohmann/json.hpp>

namespace trnsim::analysis {

struct SizedFleet {
  nlohmann::json result;        // the serve result at the chosen replica count
  bool met = false;             // false: not met within max_replicas (result is at max)
  nlohmann::json trials = nlohmann::json::array();  // [{replicas, slo_attainment}] in search order
};

// `values`: serve options (workloads/serve_spec.h) without "replicas". With "replicas" given the
// fleet is that size and only checked.
SizedFleet size_fleet(const nlohmann::json& values, double attainment, int max_replicas);

}  // namespace trnsim::analysis
