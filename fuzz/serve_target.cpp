// Serving inputs: the same bytes as an Azure-format request trace (parse_azure_trace) and, when
// they are a JSON object, as the options of `trnsim serve` / trnsim.serve(**kwargs)
// (serve_spec_from_json: every option's value checked, a deployment assembled).
#include <nlohmann/json.hpp>

#include "fuzz_target.h"
#include "trnsim/workloads/serve_spec.h"
#include "trnsim/workloads/traffic_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  trnsim::fuzz::run_target(data, size, [](const std::string& text) { trnsim::workloads::parse_azure_trace(text, "fuzz.csv"); });
  return trnsim::fuzz::run_target(data, size, [](const std::string& text) {
    const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_object()) trnsim::workloads::serve_spec_from_json(j);
  });
}
