// Message sizes as nccom-test takes them: "1K:1G" is 1 KiB, 2 KiB, ... 1 GiB (each size the
// previous times the step factor, up to and including the end); "64K,1M" a list; "4096" bytes.
// K/M/G/T (with or without B, or KiB/MiB/GiB/TiB) are binary, as in nccom-test.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

namespace trnsim::collectives {

int64_t parse_size(std::string_view s);  // ShapeError with the text on bad input
std::vector<int64_t> parse_sizes(std::string_view spec, double step_factor = 2.0);

}  // namespace trnsim::collectives
