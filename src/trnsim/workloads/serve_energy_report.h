// The energy fields of a serving result: the chips' and fabric's energy by unit (the iterations'
// dynamic energy, static power for all the time replicas are held), average and peak power,
// energy per request and per output token, and output tokens/s per MW at the chip, server
// (+ the hosts' share) and facility (x PUE) level.
#pragma once
#include <cstdint>

#include <nlohmann/json.hpp>

#include "trnsim/workloads/serve_cluster.h"

namespace trnsim::workloads {

struct ServeEnergyContext {
  double idle_power_w = 0;  // one replica's chips with no iteration running
  double host_power_w = 0;  // one replica's share of its instances' hosts
  double pue = 1.15;        // facility power / IT power
};

void add_serve_energy(nlohmann::json& j, const ServeOutcome& out, const ServeEnergyContext& e, int64_t output_tokens);

}  // namespace trnsim::workloads
