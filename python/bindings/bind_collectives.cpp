// Python bindings of the collectives layer: trnsim._core.collectives. Timing results come out
// as the same JSON text `trnsim collective --json` prints (collective_json.h: one source of
// field names); python/trnsim/collectives.py turns it into dicts. Functional runs take and
// return float32 arrays of shape [ranks, elements].
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <nlohmann/json.hpp>

#include "registry.h"
#include "trnsim/collectives/collective.h"
#include "trnsim/collectives/collective_json.h"
#include "trnsim/collectives/i_collective_algorithm.h"
#include "trnsim/collectives/size_sweep.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/numerics/dtype.h"
#include "trnsim/common/json_text.h"

namespace nb = nanobind;
using namespace trnsim;
using namespace trnsim::collectives;

namespace {

using In = nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using Out = nb::ndarray<nb::numpy, float, nb::ndim<2>>;

CollectiveOptions options(const std::string& op, int ranks, int ranks_per_chip, int systems, const std::string& dtype,
                          const std::string& algorithm) {
  CollectiveOptions o;
  o.op = parse_op(op);
  o.ranks = ranks;
  o.ranks_per_chip = ranks_per_chip;
  o.systems = systems;
  o.dtype = numerics::dtype_from_string(dtype);
  o.algorithm = algorithm;
  return o;
}

std::string time_sizes(const std::string& op, int ranks, const std::string& system, const std::vector<int64_t>& sizes,
                       const std::string& dtype, const std::string& algorithm, int ranks_per_chip, int systems,
                       bool in_program) {
  const hw::SystemSpec sys = hw::load_system(system);
  CollectiveOptions o = options(op, ranks, ranks_per_chip, systems, dtype, algorithm);
  o.launch = in_program ? Launch::InProgram : Launch::Standalone;
  nlohmann::json out = nlohmann::json::array();
  {
    nb::gil_scoped_release nogil;
    CollectiveRunner runner(sys, o);
    for (int64_t s : sizes) runner.count_for(s);
    for (int64_t s : sizes) out.push_back(to_json(runner.time(s), sys.name, systems, o.dtype));
  }
  return json_text(out);
}

Out run(const std::string& op, In inputs, const std::string& system, const std::string& algorithm, int ranks_per_chip,
        int systems) {
  const hw::SystemSpec sys = hw::load_system(system);
  const int n = static_cast<int>(inputs.shape(0));
  const size_t len = inputs.shape(1);
  CollectiveOptions o = options(op, n, ranks_per_chip, systems, "fp32", algorithm);
  std::vector<std::vector<float>> in(n), got;
  for (int r = 0; r < n; ++r) in[r].assign(inputs.data() + r * len, inputs.data() + (r + 1) * len);
  {
    nb::gil_scoped_release nogil;
    CollectiveRunner runner(sys, o);
    got = runner.run(in);
  }
  const size_t out_len = got.empty() ? 0 : got[0].size();
  float* data = new float[n * out_len + 1];
  for (int r = 0; r < n; ++r) std::copy(got[r].begin(), got[r].end(), data + r * out_len);
  nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<float*>(p); });
  size_t shape[2] = {static_cast<size_t>(n), out_len};
  return Out(data, 2, shape, owner);
}

void bind(nb::module_& root) {
  nb::module_ m = root.def_submodule("collectives", "Collectives on the simulated fabric");
  m.def("time", &time_sizes, nb::arg("op"), nb::arg("ranks"), nb::arg("system"), nb::arg("sizes"),
        nb::arg("dtype"), nb::arg("algorithm"), nb::arg("ranks_per_chip"), nb::arg("systems"),
        nb::arg("in_program") = false,
        "Times a collective at each size; JSON text, a list of objects like `trnsim collective --json`");
  m.def("run", &run, nb::arg("op"), nb::arg("inputs"), nb::arg("system"), nb::arg("algorithm"),
        nb::arg("ranks_per_chip"), nb::arg("systems"), "Runs a collective on real fp32 data, one row per rank");
  m.def("parse_sizes", &parse_sizes, nb::arg("spec"), nb::arg("step_factor") = 2.0);
  m.def("algorithms", &algorithm_names);
  m.def("ops", [] {
    std::vector<std::string> out;
    for (auto n : op_names()) out.emplace_back(n);
    return out;
  });
}

trnsim::bindings::Register reg{50, bind};

}  // namespace
