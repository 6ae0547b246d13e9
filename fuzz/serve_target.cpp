// Serving inputs: the same bytes as an Azure-format request trace (parse_azure_trace) and, when
// they are a JSON object, as the options of `trnsim serve` / trnsim.serve(**kwargs): every
// option's value checked (serve_spec_from_json, validate_serve_options), then the traffic the
// run would send drawn (RequestSource: arrivals, lengths, a named trace file), as run_serve
// does before the cost model. The memory limit (fuzz_target.h) bounds the request count.
#include <nlohmann/json.hpp>

#include "fuzz_target.h"
#include "trnsim/workloads/serve_run.h"
#include "trnsim/workloads/serve_spec.h"
#include "trnsim/workloads/traffic_trace.h"
#include "trnsim/workloads/traffic_workload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  trnsim::fuzz::run_target(data, size, [](const std::string& text) { trnsim::workloads::parse_azure_trace(text, "fuzz.csv"); });
  return trnsim::fuzz::run_target(data, size, [](const std::string& text) {
    const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return;
    auto spec = trnsim::workloads::serve_spec_from_json(j);
    trnsim::workloads::validate_serve_options(spec.options);
    trnsim::workloads::RequestSource source(spec.options.traffic, /*max_context=*/131072);
    if (!source.closed_loop()) source.all();
  });
}
