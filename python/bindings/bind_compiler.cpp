// Python bindings of the graph compiler and the runtime: trnsim._core.compiler. A model
// crosses as the serialized ONNX bytes (or a path); tensors as flat float32 arrays with their
// shapes; the report as the JSON text `trnsim run --json` prints. python/trnsim/compiler.py
// is the Python face (CompiledModel, compile_onnx).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <vector>

#include "registry.h"
#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/compiled_model_io.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/hw/logical_cores.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/in_flight_load.h"
#include "trnsim/runtime/loaded_model.h"
#include "trnsim/runtime/report_json.h"
#include "trnsim/runtime/run_power_cap.h"
#include "trnsim/common/json_text.h"

namespace nb = nanobind;
using namespace trnsim;

namespace {

using Flat = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;
using Out = nb::ndarray<nb::numpy, float, nb::ndim<1>>;

Out to_numpy(std::vector<float>&& v) {
  auto* owned = new std::vector<float>(std::move(v));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
  size_t shape[1] = {owned->size()};
  return Out(owned->data(), 1, shape, owner);
}

// The compiled model with the chip it was compiled for and its runtime, kept together so the
// references inside LoadedModel stay valid.
struct Compiled {
  hw::ChipSpec chip;
  compiler::CompiledModel model;
  std::unique_ptr<runtime::LoadedModel> loaded;
  std::string last_report = "{}";
};

std::unique_ptr<Compiled> compile_onnx(const nb::bytes& model, bool is_path, const std::string& chip, const std::string& dtype,
                                       std::optional<int64_t> batch, const std::map<std::string, int64_t>& dims,
                                       const std::map<std::string, std::vector<int64_t>>& shapes, bool keep_ir, int cores, int lnc,
                                       bool timing_only, bool overlap) {
  std::string data(model.c_str(), model.size());
  compiler::Graph g;
  hw::ChipSpec spec;
  compiler::CompileOptions opt;
  {
    nb::gil_scoped_release release;
    g = is_path ? compiler::import_onnx_file(data) : compiler::import_onnx_bytes(data, "<bytes>");
    spec = hw::load_chip(chip);
  }
  opt.policy = compiler::parse_policy(dtype);
  opt.batch = batch.value_or(1);
  opt.dims = dims;
  for (const auto& [k, v] : shapes) opt.input_shapes[k] = v;
  opt.keep_ir = keep_ir;
  opt.cores = hw::physical_cores(spec, cores, lnc);  // logical cores of lnc physical ones
  opt.timing_only = timing_only;
  auto c = std::make_unique<Compiled>();
  c->chip = std::move(spec);
  {
    nb::gil_scoped_release release;
    c->model = compiler::compile(std::move(g), c->chip, opt);
  }
  c->loaded = std::make_unique<runtime::LoadedModel>(c->model, c->chip, overlap);
  return c;
}

// A program saved by Compiled.save / `trnsim compile -o`: on the chip it names, or on `chip`
// (which must be the same spec).
std::unique_ptr<Compiled> load_compiled(const std::string& path, std::optional<std::string> chip) {
  auto c = std::make_unique<Compiled>();
  {
    nb::gil_scoped_release release;
    c->chip = hw::load_chip(chip ? *chip : compiler::read_compiled_header(path).chip);
    c->model = compiler::load_compiled(path, c->chip);
  }
  c->loaded = std::make_unique<runtime::LoadedModel>(c->model, c->chip);
  return c;
}

std::map<std::string, std::tuple<std::vector<int64_t>, Out>> run(Compiled& c, const std::map<std::string, Flat>& inputs, bool timing,
                                                                  double clock_scale, double power_cap,
                                                                  const std::string& power_cap_scope, const std::string& system) {
  std::map<std::string, std::vector<float>> in;
  for (const auto& [n, a] : inputs) in[n].assign(a.data(), a.data() + a.size());
  runtime::RunOutput r;
  runtime::RunPower power;
  {
    nb::gil_scoped_release release;
    // Another operating point (--clock-scale / --power-cap): the program on the chip moved there.
    const bool moved = clock_scale != 1 || power_cap > 0;
    if (moved) power = runtime::run_power(c.model, c.chip, {clock_scale, power_cap, power_cap_scope, system});
    r = moved ? runtime::LoadedModel(c.model, power.chip).run(in, timing ? core::Mode::Timing : core::Mode::Functional)
              : c.loaded->run(in, timing ? core::Mode::Timing : core::Mode::Functional);
    if (!moved) power.chip = c.chip;
  }
  auto report = runtime::report_json(r.report, c.model.shapes.empty() || c.model.inputs.empty() || c.model.shapes.at(c.model.inputs[0]).empty()
                                                     ? 1 : c.model.shapes.at(c.model.inputs[0])[0]);
  report["clock_scale"] = power.chip.energy.clock_scale;
  report["voltage_scale"] = power.chip.energy.voltage_scale;
  if (power.capped) report["power_cap"] = power.json();
  c.last_report = trnsim::json_text(report);
  std::map<std::string, std::tuple<std::vector<int64_t>, Out>> out;
  for (auto& [n, v] : r.outputs) out.emplace(n, std::make_tuple(c.model.shapes.at(n), to_numpy(std::move(v))));
  return out;
}

void bind(nb::module_& root) {
  nb::module_ m = root.def_submodule("compiler", "The graph compiler (ONNX import, passes, lowering) and the runtime");
  nb::class_<Compiled>(m, "Compiled")
      .def_prop_ro("input_names", [](const Compiled& c) { return c.model.inputs; })
      .def_prop_ro("output_names", [](const Compiled& c) { return c.model.outputs; })
      .def_prop_ro("shapes", [](const Compiled& c) {
        std::map<std::string, std::vector<int64_t>> s(c.model.shapes.begin(), c.model.shapes.end());
        return s;
      })
      .def_prop_ro("input_types", [](const Compiled& c) {
        std::map<std::string, std::string> t;
        for (const auto& n : c.model.inputs) t[n] = std::string(compiler::elem_name(c.model.graph.tensor(n).type));
        return t;
      })
      .def_prop_ro("output_types", [](const Compiled& c) {
        std::map<std::string, std::string> t;
        for (const auto& n : c.model.outputs) t[n] = std::string(compiler::elem_name(c.model.graph.tensor(n).type));
        return t;
      })
      .def_prop_ro("compile_time_s", [](const Compiled& c) { return c.model.compile_time_s; })
      .def_prop_ro("chip", [](const Compiled& c) { return c.chip.name; })
      .def_prop_ro("kernels", [](const Compiled& c) { return c.model.segments.size(); })
      .def("dump_ir", [](const Compiled& c) { return c.model.dump_ir(); })
      .def_prop_ro("dtype", [](const Compiled& c) { return std::string(compiler::policy_name(c.model.policy)); })
      .def("save", [](const Compiled& c, const std::string& path) { compiler::save_compiled(c.model, c.chip, path); }, nb::arg("path"),
           "Writes the program to a file (trnsim.load_compiled and `trnsim run FILE` read it)")
      .def("report_json", [](const Compiled& c) { return c.last_report; })
      .def("host_io_s", [](const Compiled& c) { return runtime::host_io_seconds(c.chip, c.model); },
           "Seconds one request's inputs in and outputs out take over the chip's host link (0 without one)")
      .def("run", &run, nb::arg("inputs"), nb::arg("timing") = false, nb::arg("clock_scale") = 1.0,
           nb::arg("power_cap") = 0.0, nb::arg("power_cap_scope") = "chip", nb::arg("system") = "",
           "Runs one forward pass; returns {name: (shape, flat float32 array)} (empty in timing mode)");
  m.def("supported_ops", [] {
    std::vector<std::string> ops;
    for (const auto& r : compiler::op_table())
      if (!r.internal) ops.emplace_back(r.name);
    return ops;
  }, "ONNX ops the importer accepts (each lowers or folds; see docs/compiler.md for limits)");
  m.def("load_compiled", &load_compiled, nb::arg("path"), nb::arg("chip").none() = nb::none(),
        "Loads a program saved by Compiled.save or `trnsim compile -o`");
  m.def("compile_onnx", &compile_onnx, nb::arg("model"), nb::arg("is_path"), nb::arg("chip"), nb::arg("dtype"), nb::arg("batch").none(),
        nb::arg("dims"), nb::arg("shapes"), nb::arg("keep_ir"), nb::arg("cores") = 0, nb::arg("lnc") = 0, nb::arg("timing_only") = false,
        nb::arg("overlap") = true,
        "Imports an ONNX model (bytes, or a path when is_path) and compiles it for a chip (overlap=False: a barrier "
        "between nodes instead of per-instruction dependencies)");
}

bindings::Register reg{60, bind};

}  // namespace
