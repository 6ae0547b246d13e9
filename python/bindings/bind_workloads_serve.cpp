// Python bindings of the serving simulator: trnsim._core.serve. Options go in as JSON with the
// names of `trnsim serve`'s flags (workloads/serve_spec.h: one table for both), results come out
// as the JSON text `trnsim serve --json` prints, plus the time series; python/trnsim/serve.py
// turns them into dicts.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "registry.h"
#include "trnsim/workloads/serve_report.h"
#include "trnsim/workloads/serve_run.h"

namespace nb = nanobind;
using namespace trnsim;
using namespace trnsim::workloads;

namespace {

std::pair<std::string, std::string> serve(const std::string& options_json) {
  ServeSpec spec = serve_spec_from_json(nlohmann::json::parse(options_json));
  nb::gil_scoped_release nogil;
  const auto r = run_serve(std::move(spec));
  return {r.result.dump(), timeline_json(r.timeline).dump()};
}

std::vector<std::string> option_names() {
  std::vector<std::string> out;
  for (const auto& o : serve_option_table()) out.push_back(o.name);
  return out;
}

void bind(nb::module_& root) {
  nb::module_ m = root.def_submodule("serve", "LLM serving simulation (trnsim serve)");
  m.def("serve", &serve, nb::arg("options_json"),
        "Runs a serving simulation; (result JSON, time-series JSON) like `trnsim serve --json`");
  m.def("option_names", &option_names, "The options of trnsim serve (CLI spelling)");
}

bindings::Register reg{85, bind};

}  // namespace
