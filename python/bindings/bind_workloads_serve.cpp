// Python bindings of the serving simulator: trnsim._core.serve. Options go in as JSON with the
// names of `trnsim serve`'s flags (workloads/serve_spec.h: one table for both), results come out
// as the JSON text `trnsim serve --json` prints, plus the time series; python/trnsim/serve.py
// turns them into dicts.
#include <nanobind/nanobind.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <memory>

#include "registry.h"
#include "trnsim/workloads/serve_report.h"
#include "trnsim/workloads/serve_run.h"

namespace nb = nanobind;
using namespace trnsim;
using namespace trnsim::workloads;

namespace {

// Python's progress callback gets (simulated s, done, total) only after 2 s of wall time and
// at most every 0.5 s, so short runs never take the GIL for it.
ServeProgress throttled(nb::object cb) {
  if (cb.is_none()) return {};
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto last = std::make_shared<double>(0.0);
  return [cb, start, last](double sim_s, int64_t done, int64_t total) {
    const double wall = std::chrono::duration<double>(Clock::now() - start).count();
    if (wall < 2 || wall - *last < 0.5) return;
    *last = wall;
    nb::gil_scoped_acquire gil;
    cb(sim_s, done, total);
  };
}

std::pair<std::string, std::string> serve(const std::string& options_json, nb::object progress) {
  ServeSpec spec = serve_spec_from_json(nlohmann::json::parse(options_json));
  const ServeProgress report = throttled(progress);
  nb::gil_scoped_release nogil;
  const auto r = run_serve(std::move(spec), report);
  return {r.result.dump(), timeline_json(r.timeline).dump()};
}

std::vector<std::string> option_names() {
  std::vector<std::string> out;
  for (const auto& o : serve_option_table()) out.push_back(o.name);
  return out;
}

void bind(nb::module_& root) {
  nb::module_ m = root.def_submodule("serve", "LLM serving simulation (trnsim serve)");
  m.def("serve", &serve, nb::arg("options_json"), nb::arg("progress") = nb::none(),
        "Runs a serving simulation; (result JSON, time-series JSON) like `trnsim serve --json`");
  m.def("option_names", &option_names, "The options of trnsim serve (CLI spelling)");
}

bindings::Register reg{85, bind};

}  // namespace
