// JSON of chip and system specs, for `trnsim specs --json` and trnsim.specs(). Field names carry
// their unit (hbm_capacity_bytes, hbm_bandwidth_gbps, link_latency_ns, power_w, ...); GB/s means
// 10^9 bytes per second. Dtype-keyed maps use canonical dtype names. Unknown values are null.
#pragma once
#include <nlohmann/json.hpp>

#include "trnsim/hw/chip_spec.h"

namespace trnsim::hw {

// Chip: identity, dense_tflops (published peak where AWS gives one, else clock-derived, for every
// dtype TensorE runs), published_dense_tflops, clock_derived_tflops, sparse_tflops,
// roofline_knee_flop_per_byte, HBM, link, power, and the full core under "core".
nlohmann::json to_json(const ChipSpec& chip);
// System: chip (the full chip object), counts, topology, scale_out, price and whole-system totals.
nlohmann::json to_json(const SystemSpec& system);

}  // namespace trnsim::hw
