// Seeded random inputs for a compiled model when the user gives none: floats uniform in
// [-1, 1], integer inputs (token ids, indices) uniform in [0, 10), booleans 0/1. The same seed
// gives the same values on every machine (mt19937_64, no platform distributions).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trnsim/compiler/compiled_model.h"

namespace trnsim::runtime {

std::map<std::string, std::vector<float>> random_inputs(const compiler::CompiledModel& m, uint64_t seed = 0);

}  // namespace trnsim::runtime
