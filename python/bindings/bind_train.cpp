// Python bindings of the training model: trnsim._core.train. The request and the result are
// the JSON of `trnsim train --json` (train_run.h: one parser, one set of field names);
// python/trnsim/train.py turns keyword arguments into the request and the result into a dict.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <nlohmann/json.hpp>

#include "registry.h"
#include "trnsim/common/error.h"
#include "trnsim/workloads/train_run.h"

namespace nb = nanobind;

namespace {

std::string run(const std::string& request) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(request);
  } catch (const nlohmann::json::exception& e) {
    throw trnsim::ConfigError(std::string("train: the request is not JSON: ") + e.what());
  }
  std::string out;
  {
    nb::gil_scoped_release nogil;
    out = trnsim::workloads::run_train(trnsim::workloads::train_request(j)).dump();
  }
  return out;
}

void bind(nb::module_& root) {
  nb::module_ m = root.def_submodule("train", "Training step, MFU, memory and goodput");
  m.def("run", &run, nb::arg("request"), "A JSON request of `trnsim train` options; the JSON result");
}

trnsim::bindings::Register reg{80, bind};

}  // namespace
