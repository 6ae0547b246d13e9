// Python bindings of runtime/in_flight_load.h: trnsim._core.load.in_flight, the closed-loop
// load figures of a run (`trnsim run --in-flight`), as the same JSON object the CLI prints.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>

#include "registry.h"
#include "trnsim/common/json_text.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/in_flight_load.h"

namespace nb = nanobind;

namespace {

void bind(nb::module_& parent) {
  nb::module_ m = parent.def_submodule("load", "A model under a closed-loop load of requests kept in flight");
  m.def(
      "in_flight",
      [](const std::string& chip, int cores, int lnc, double exec_s, int64_t batch, int in_flight, double host_s) {
        const int slots = trnsim::runtime::copy_slots(trnsim::hw::load_chip(chip), cores, lnc);
        return trnsim::json_text(trnsim::runtime::load_json(trnsim::runtime::in_flight_load(exec_s, batch, in_flight, slots, host_s)));
      },
      nb::arg("chip"), nb::arg("cores"), nb::arg("lnc"), nb::arg("exec_s"), nb::arg("batch"), nb::arg("in_flight"),
      nb::arg("host_io_s") = 0.0,
      "JSON of the load: p50/p99/mean latency and inferences per second with in_flight requests over the copies that fit");
}

trnsim::bindings::Register reg{75, bind};

}  // namespace
