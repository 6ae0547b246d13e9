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
      [](const std::string& chip, int cores, int lnc, double exec_s, int64_t batch, int in_flight, double input_bytes,
         double output_bytes, int transfers) {
        const trnsim::hw::ChipSpec spec = trnsim::hw::load_chip(chip);
        const int slots = trnsim::runtime::copy_slots(spec, cores, lnc);
        const double host_s = trnsim::runtime::host_io_seconds(spec, input_bytes, output_bytes, transfers);
        return trnsim::json_text(trnsim::runtime::load_json(trnsim::runtime::in_flight_load(exec_s, batch, in_flight, slots, host_s)));
      },
      nb::arg("chip"), nb::arg("cores"), nb::arg("lnc"), nb::arg("exec_s"), nb::arg("batch"), nb::arg("in_flight"),
      nb::arg("input_bytes") = 0.0, nb::arg("output_bytes") = 0.0, nb::arg("transfers") = 0,
      "JSON of the load: p50/p99/mean latency and inferences per second with in_flight requests over the copies that fit");
}

trnsim::bindings::Register reg{75, bind};

}  // namespace
