// The run report as JSON (the shape `trnsim run --json` prints and the Python
// CompiledModel.report dict mirrors), a printed table, and the timeline as a Chrome/Perfetto
// trace (one track per engine or DMA queue, each instruction labelled with its IR op).
#pragma once
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "trnsim/runtime/loaded_model.h"

namespace trnsim::runtime {

nlohmann::json report_json(const Report& r, int64_t batch = 1);
std::string report_table(const Report& r, int64_t batch = 1, size_t top_ops = 25);
void write_timeline_trace(std::ostream& out, const Report& r);

}  // namespace trnsim::runtime
