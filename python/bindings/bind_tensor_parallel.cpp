// Python binding of tensor-parallel execution: trnsim._core.tensor_parallel.run. A model
// crosses as ONNX bytes or a path, inputs as flat float32 arrays with their shapes, the report
// as the JSON text `trnsim run --tp N --json` prints. python/trnsim/tensor_parallel.py is the
// Python face (trnsim.run_tensor_parallel).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <string>
#include <vector>

#include "registry.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/random_inputs.h"
#include "trnsim/runtime/tensor_parallel_model.h"
#include "trnsim/common/json_text.h"

namespace nb = nanobind;
using namespace trnsim;

namespace {

using Flat = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;
using Out = nb::ndarray<nb::numpy, float, nb::ndim<1>>;
using Outputs = std::map<std::string, std::tuple<std::vector<int64_t>, Out>>;

Out to_numpy(std::vector<float>&& v) {
  auto* owned = new std::vector<float>(std::move(v));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
  size_t shape[1] = {owned->size()};
  return Out(owned->data(), 1, shape, owner);
}

// Returns ({output: (shape, flat array)} (empty in timing mode), report JSON text).
std::tuple<Outputs, std::string> run(const nb::bytes& model, bool is_path, const std::string& system, int tp,
                                     const std::string& dtype, bool timing, const std::map<std::string, Flat>& inputs,
                                     const std::map<std::string, std::vector<int64_t>>& shapes, std::optional<int64_t> batch,
                                     const std::map<std::string, int64_t>& dims, const std::string& algorithm, uint64_t seed, int lnc) {
  const std::string data(model.c_str(), model.size());
  std::map<std::string, std::vector<float>> in;
  for (const auto& [n, a] : inputs) in[n].assign(a.data(), a.data() + a.size());
  runtime::TpRunOutput r;
  std::map<std::string, compiler::Shape> out_shapes;
  {
    nb::gil_scoped_release release;
    runtime::TpOptions o;
    o.tp = tp;
    o.lnc = lnc;
    o.compile.timing_only = timing;
    o.compile.policy = compiler::parse_policy(dtype);
    o.compile.batch = batch.value_or(1);
    o.compile.dims = dims;
    for (const auto& [k, v] : shapes) o.compile.input_shapes[k] = v;
    o.all_ranks = !timing;
    o.algorithm = algorithm;
    const hw::SystemSpec sys = hw::load_system(system);
    runtime::TensorParallelModel m(is_path ? compiler::import_onnx_file(data) : compiler::import_onnx_bytes(data, "<bytes>"), sys, o);
    if (!timing && in.empty()) in = runtime::random_inputs(m.single_chip(), seed);
    r = m.run(in, timing ? core::Mode::Timing : core::Mode::Functional);
    out_shapes = m.single_chip().shapes;
  }
  Outputs out;
  for (auto& [n, v] : r.outputs) out.emplace(n, std::make_tuple(out_shapes.at(n), to_numpy(std::move(v))));
  return {std::move(out), json_text(runtime::tp_report_json(r.report))};
}

void bind(nb::module_& root) {
  nb::module_ m = root.def_submodule("tensor_parallel", "Megatron-style tensor-parallel execution across the chips of a system");
  m.def("run", &run, nb::arg("model"), nb::arg("is_path"), nb::arg("system"), nb::arg("tp"), nb::arg("dtype"), nb::arg("timing"),
        nb::arg("inputs"), nb::arg("shapes"), nb::arg("batch").none(), nb::arg("dims"), nb::arg("algorithm"), nb::arg("seed"), nb::arg("lnc") = 0,
        "Splits an ONNX model across tp logical NeuronCores of a system and runs it; returns (outputs, report JSON)");
}

bindings::Register reg{70, bind};

}  // namespace
