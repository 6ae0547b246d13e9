// Python binding of the model converter: trnsim._core.convert.convert (python/trnsim/convert.py
// is the Python face, trnsim.convert). The report crosses as the JSON text `trnsim convert
// --json` prints.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/map.h>

#include "registry.h"
#include "trnsim/common/error.h"
#include "trnsim/common/json_text.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/model_convert.h"

namespace nb = nanobind;
using namespace trnsim;

namespace {

std::string convert(const std::string& model, const std::string& output, const std::string& chip, const std::string& dtype,
                    const std::string& quantize, const std::string& calibrate, bool per_channel, const std::string& activations,
                    const std::string& sparsity, int64_t batch, const std::map<std::string, int64_t>& dims, uint64_t seed) {
  runtime::ConvertRequest r;
  r.model = model;
  r.output = output;
  r.calibrate = calibrate;
  r.seed = seed;
  r.options.policy = compiler::parse_policy(dtype);
  r.options.batch = batch;
  r.options.dims = dims;
  if (!quantize.empty() && quantize != "none") r.options.quant.format = compiler::parse_quant_format(quantize);
  r.options.quant.per_channel = per_channel;
  if (!activations.empty()) compiler::apply_activations_option(r.options.quant, activations == "on" ? "" : activations);
  if (!sparsity.empty() && sparsity != "none") {
    if (sparsity != "4:16") throw trnsim::ConfigError("sparsity " + sparsity + ": expected 4:16 (TensorE's structured-sparse pattern)");
    r.options.quant.sparse_4_16 = true;
  }
  nb::gil_scoped_release release;
  const hw::ChipSpec spec = hw::load_chip(chip);
  return json_text(runtime::convert_model(r, spec).report);
}

void bind(nb::module_& root) {
  nb::module_ m = root.def_submodule("convert", "Weight quantisation and 4:16 sparsity of ONNX models (trnsim convert)");
  m.def("convert", &convert, nb::arg("model"), nb::arg("output"), nb::arg("chip"), nb::arg("dtype"), nb::arg("quantize"),
        nb::arg("calibrate"), nb::arg("per_channel"), nb::arg("activations"), nb::arg("sparsity"), nb::arg("batch"), nb::arg("dims"),
        nb::arg("seed"), "Converts an ONNX model; returns the report as JSON text");
}

bindings::Register reg{61, bind};

}  // namespace
