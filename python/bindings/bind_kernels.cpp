// Python bindings of the kernel library, the kernel builder and the profiler: trnsim._core.kernels.
// Summaries cross as JSON text built by the same C++ as `trnsim kernel --json`; tensors cross
// as flat float32 numpy arrays with their shapes. python/trnsim/kernels.py is the Python face.
#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <vector>

#include "registry.h"
#include "trnsim/common/error.h"
#include "trnsim/core/run.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/kernels/kernel_builder.h"
#include "trnsim/kernels/registry.h"
#include "trnsim/report/kernel_run.h"
#include "trnsim/report/summary.h"
#include "trnsim/report/trace.h"
#include "trnsim/common/json_text.h"

namespace nb = nanobind;
using namespace trnsim;
using namespace trnsim::kernels;

namespace {

using Flat = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;
using Out = nb::ndarray<nb::numpy, float, nb::ndim<1>>;
using Outputs = std::vector<std::tuple<std::string, std::vector<int64_t>, Out>>;

Out to_numpy(const std::vector<float>& v) {
  float* data = new float[v.size() + 1];
  std::copy(v.begin(), v.end(), data);
  nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<float*>(p); });
  size_t shape[1] = {v.size()};
  return Out(data, 1, shape, owner);
}

Tensors from_numpy(const std::map<std::string, Flat>& in) {
  Tensors t;
  for (const auto& [name, a] : in) t[name].assign(a.data(), a.data() + a.size());
  return t;
}

Outputs outputs_of(const isa::Program& p, const core::RunResult& r) {
  Outputs out;
  for (const auto& t : p.tensors) {
    auto it = r.outputs.find(t.name);
    if (it != r.outputs.end()) out.emplace_back(t.name, t.shape, to_numpy(it->second));
  }
  return out;
}

// ---- the library by name

nlohmann::json registry_json() {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& k : kernel_registry()) {
    nlohmann::json params = nlohmann::json::array();
    for (const auto& p : k.params) {
      const char* kind = p.kind == KernelParam::Kind::Int ? "int" : p.kind == KernelParam::Kind::Flag ? "flag" : "choice";
      nlohmann::json j{{"name", p.name}, {"help", p.help}, {"kind", kind}};
      if (p.kind == KernelParam::Kind::Choice) j["choices"] = p.choices;
      else j.update({{"default", p.default_int}, {"min", p.min}, {"max", p.max}});
      params.push_back(j);
    }
    std::vector<std::string> dtypes;
    for (auto t : k.dtypes) dtypes.emplace_back(numerics::name(t));
    all.push_back({{"name", k.name}, {"description", k.description}, {"params", params}, {"dtypes", dtypes}});
  }
  return all;
}

std::tuple<std::string, Outputs> run_kernel(const std::string& name, const std::string& chip,
                                            const std::map<std::string, std::string>& params, const std::string& dtype,
                                            const std::string& mode, const std::string& trace, uint64_t seed,
                                            const std::map<std::string, Flat>& inputs) {
  report::KernelRunOptions o;
  o.kernel = name;
  o.chip = chip;
  o.params = params;
  o.dtype = dtype;
  if (mode == "auto") o.data = report::DataMode::Auto;
  else if (mode == "functional") o.data = report::DataMode::Functional;
  else if (mode == "timing") o.data = report::DataMode::Timing;
  else throw Error("mode must be 'auto', 'functional' or 'timing', got '" + mode + "'");
  o.trace_path = trace;
  o.seed = seed;
  o.inputs = from_numpy(inputs);
  report::KernelRun r;
  {
    nb::gil_scoped_release nogil;
    r = report::run_kernel(o);
  }
  nlohmann::json j = r.to_json();
  Outputs outs = outputs_of(r.program, r.result);
  return {json_text(j), std::move(outs)};
}

// ---- the builder. The C++ builder keeps a reference to its chip, so the Python object owns
// both; a built program carries its chip to run().

struct PyProgram {
  isa::Program program;
  std::shared_ptr<const hw::ChipSpec> chip;
};

struct PyBuilder {
  std::shared_ptr<const hw::ChipSpec> chip;
  std::unique_ptr<KernelBuilder> kb;
  std::vector<std::unique_ptr<TileRing>> rings;
  explicit PyBuilder(const std::string& chip_name)
      : chip(std::make_shared<const hw::ChipSpec>(hw::load_chip(chip_name))), kb(std::make_unique<KernelBuilder>(*chip)) {}
  KernelBuilder& b() {
    if (!kb) throw Error("this KernelBuilder has been built; make a new one");
    return *kb;
  }
};

template <class E>
E enum_named(const std::string& s, std::string_view (*name)(E), const char* what) {
  std::string all;
  for (int i = 0; i < static_cast<int>(E::kCount); ++i) {
    if (name(static_cast<E>(i)) == s) return static_cast<E>(i);
    all += fmt::format("{}{}", all.empty() ? "" : ", ", name(static_cast<E>(i)));
  }
  throw UnsupportedError(fmt::format("no {} '{}'; the choices: {}", what, s, all));
}

AluOp alu(std::string s) {
  if (s == "sub") s = "subtract";
  else if (s == "mul") s = "multiply";
  else if (s == "div") s = "divide";
  return enum_named<AluOp>(s, &isa::alu_name, "ALU op");
}
ActFunc act(const std::string& s) { return enum_named<ActFunc>(s, &isa::act_name, "activation function"); }

Scalar scalar(const nb::handle& h) {
  if (nb::isinstance<View>(h)) return Scalar(nb::cast<View>(h));
  return Scalar(nb::cast<float>(h));
}

Opts opts(const std::optional<std::string>& engine, int queue) {
  Opts o;
  o.queue = queue;
  if (engine) {
    const std::string& e = *engine;
    if (e == "tensor") o.engine = Engine::Tensor;
    else if (e == "vector") o.engine = Engine::Vector;
    else if (e == "scalar") o.engine = Engine::Scalar;
    else if (e == "gpsimd") o.engine = Engine::GpSimd;
    else throw UnsupportedError("engine must be tensor, vector, scalar or gpsimd, got '" + e + "'");
  }
  return o;
}

std::vector<Range> ranges(const std::vector<std::pair<int64_t, int64_t>>& r) {
  std::vector<Range> out;
  for (auto [b, e] : r) out.push_back({b, e});
  return out;
}

std::tuple<std::string, Outputs> run_program(const PyProgram& p, const std::map<std::string, Flat>& inputs,
                                             bool timing_only, const std::string& trace) {
  core::RunOptions o;
  o.mode = timing_only ? core::Mode::Timing : core::Mode::Functional;
  Tensors in = from_numpy(inputs);
  core::RunResult r;
  {
    nb::gil_scoped_release nogil;
    r = core::run(p.program, *p.chip, in, o);
  }
  nlohmann::json j = report::to_json(report::summarize(p.program, r, *p.chip));
  if (!trace.empty()) {
    auto st = report::write_trace_file(trace, p.program, r, *p.chip);
    j["trace"] = {{"path", trace}, {"events", st.events}, {"bytes", st.bytes}};
  }
  return {json_text(j), outputs_of(p.program, r)};
}

#define OPTS nb::arg("engine") = nb::none(), nb::arg("queue") = -1

void bind(nb::module_& root) {
  nb::module_ m = root.def_submodule("kernels", "The kernel library, the kernel builder and the profiler");
  m.def("registry_json", [] { return json_text(registry_json()); }, "JSON list of the library kernels and their parameters");
  m.def("run_kernel", &run_kernel, nb::arg("name"), nb::arg("chip"), nb::arg("params"), nb::arg("dtype"),
        nb::arg("mode"), nb::arg("trace"), nb::arg("seed"), nb::arg("inputs"),
        "Run a library kernel: (summary JSON, [(output name, shape, flat float32 array)])");

  nb::class_<View>(m, "View")
      .def_prop_ro("shape", &View::shape)
      .def_prop_ro("dtype", [](const View& v) { return std::string(numerics::name(v.dtype())); })
      .def_prop_ro("partitions", &View::partitions)
      .def("slice", [](const View& v, const std::vector<std::pair<int64_t, int64_t>>& r) { return v.slice(ranges(r)); })
      .def("reshape", &View::reshape)
      .def("bitcast", [](const View& v, const std::string& t) { return v.bitcast(numerics::dtype_from_string(t)); })
      .def("__repr__", [](const View& v) { return "View(" + v.ap().to_string() + ")"; });
  nb::class_<Tile, View>(m, "Tile");
  nb::class_<Tensor, View>(m, "Tensor")
      .def_prop_ro("name", &Tensor::name)
      .def("with_partition_axis", &Tensor::with_partition_axis);

  nb::class_<PyProgram>(m, "Program")
      .def_prop_ro("name", [](const PyProgram& p) { return p.program.name; })
      .def_prop_ro("chip", [](const PyProgram& p) { return p.chip->name; })
      .def_prop_ro("instruction_count", [](const PyProgram& p) { return p.program.instruction_count(); })
      .def_prop_ro("tensors", [](const PyProgram& p) {
        std::vector<std::tuple<std::string, std::vector<int64_t>, std::string, std::string>> t;
        for (const auto& x : p.program.tensors) {
          const char* kind = x.kind == isa::HbmTensor::Kind::Input ? "input" : x.kind == isa::HbmTensor::Kind::Output ? "output" : "internal";
          t.emplace_back(x.name, x.shape, std::string(numerics::name(x.dtype)), kind);
        }
        return t;
      });
  m.def("run_program", &run_program, nb::arg("program"), nb::arg("inputs"), nb::arg("timing_only"), nb::arg("trace"),
        "Run a built program: (summary JSON, [(output name, shape, flat float32 array)])");

  nb::class_<TileRing>(m, "TileRing")
      .def("next", [](TileRing& r) { return r.next(); })
      .def_prop_ro("depth", &TileRing::depth);

  nb::class_<PyBuilder>(m, "KernelBuilder")
      .def(nb::init<const std::string&>(), nb::arg("chip"))
      .def_prop_ro("chip", [](const PyBuilder& b) { return b.chip->name; })
      .def("set_name", [](PyBuilder& b, const std::string& n) { b.b().set_name(n); })
      .def("hbm_input", [](PyBuilder& b, const std::string& n, std::vector<int64_t> s, const std::string& t) {
        return b.b().hbm_input(n, std::move(s), numerics::dtype_from_string(t)); })
      .def("hbm_output", [](PyBuilder& b, const std::string& n, std::vector<int64_t> s, const std::string& t) {
        return b.b().hbm_output(n, std::move(s), numerics::dtype_from_string(t)); })
      .def("sbuf_tile", [](PyBuilder& b, std::vector<int64_t> s, const std::string& t, const std::string& n) {
        return b.b().sbuf_tile(std::move(s), numerics::dtype_from_string(t), n); },
        nb::arg("shape"), nb::arg("dtype"), nb::arg("name") = "")
      .def("psum_tile", [](PyBuilder& b, std::vector<int64_t> s, const std::string& t, const std::string& n) {
        return b.b().psum_tile(std::move(s), numerics::dtype_from_string(t), n); },
        nb::arg("shape"), nb::arg("dtype") = "fp32", nb::arg("name") = "")
      .def("tile_ring", [](PyBuilder& b, const std::string& space, std::vector<int64_t> s, const std::string& t, int depth) {
        if (space != "sbuf" && space != "psum") throw UnsupportedError("tile_ring space must be 'sbuf' or 'psum'");
        b.rings.push_back(std::make_unique<TileRing>(b.b(), space == "sbuf" ? Space::SBUF : Space::PSUM, std::move(s),
                                                     numerics::dtype_from_string(t), depth));
        return b.rings.back().get(); }, nb::rv_policy::reference_internal,
        nb::arg("space"), nb::arg("shape"), nb::arg("dtype"), nb::arg("depth") = 2)
      .def("free", [](PyBuilder& b, const Tile& t) { b.b().free(t); })
      .def("load", [](PyBuilder& b, const View& d, const View& s, std::optional<std::string> e, int q) { b.b().load(d, s, opts(e, q)); },
           nb::arg("dst"), nb::arg("src"), OPTS)
      .def("store", [](PyBuilder& b, const View& d, const View& s, std::optional<std::string> e, int q) { b.b().store(d, s, opts(e, q)); },
           nb::arg("dst"), nb::arg("src"), OPTS)
      .def("dma", [](PyBuilder& b, const View& d, const View& s, std::optional<std::string> e, int q) { b.b().dma(d, s, opts(e, q)); },
           nb::arg("dst"), nb::arg("src"), OPTS)
      .def("matmul", [](PyBuilder& b, const View& o, const View& st, const View& mv, bool start, bool stop, bool sparse) {
        b.b().matmul(o, st, mv, start, stop, sparse); },
        nb::arg("out"), nb::arg("stationary"), nb::arg("moving"), nb::arg("start") = true, nb::arg("stop") = true,
        nb::arg("sparse_stationary") = false)
      .def("transpose", [](PyBuilder& b, const View& o, const View& i) { b.b().transpose(o, i); }, nb::arg("out"), nb::arg("in_"))
      .def("matmul_mx", [](PyBuilder& b, const View& o, const View& st, const View& sts, const View& mv, const View& mvs, bool start,
                           bool stop) { b.b().matmul_mx(o, st, sts, mv, mvs, start, stop); },
           nb::arg("out"), nb::arg("stationary"), nb::arg("stationary_scale"), nb::arg("moving"), nb::arg("moving_scale"),
           nb::arg("start") = true, nb::arg("stop") = true)
      .def("quantize_mx", [](PyBuilder& b, const View& o, const View& s, const View& i) { b.b().quantize_mx(o, s, i); },
           nb::arg("out"), nb::arg("out_scale"), nb::arg("in_"))
      .def("tensor_tensor", [](PyBuilder& b, const View& o, const View& a, const View& c, const std::string& op,
                               std::optional<std::string> e) { b.b().tensor_tensor(o, a, c, alu(op), opts(e, -1)); },
           nb::arg("out"), nb::arg("in0"), nb::arg("in1"), nb::arg("op"), nb::arg("engine") = nb::none())
      .def("tensor_scalar", [](PyBuilder& b, const View& o, const View& i, const std::string& op0, nb::handle s0,
                               const std::string& op1, nb::handle s1, bool rev, std::optional<std::string> e) {
        b.b().tensor_scalar(o, i, alu(op0), scalar(s0), alu(op1), scalar(s1), rev, opts(e, -1)); },
        nb::arg("out"), nb::arg("in_"), nb::arg("op0"), nb::arg("scalar0"), nb::arg("op1") = "bypass",
        nb::arg("scalar1") = 0.0f, nb::arg("reverse0") = false, nb::arg("engine") = nb::none())
      .def("reduce", [](PyBuilder& b, const View& o, const View& i, const std::string& op, int axes, bool neg,
                        std::optional<std::string> e) { b.b().reduce(o, i, alu(op), axes, neg, opts(e, -1)); },
           nb::arg("out"), nb::arg("in_"), nb::arg("op"), nb::arg("axes") = 1, nb::arg("negate") = false,
           nb::arg("engine") = nb::none())
      .def("copy", [](PyBuilder& b, const View& o, const View& i, std::optional<std::string> e) { b.b().copy(o, i, opts(e, -1)); },
           nb::arg("out"), nb::arg("in_"), nb::arg("engine") = nb::none())
      .def("select", [](PyBuilder& b, const View& o, const View& p, const View& t, const View& f) { b.b().select(o, p, t, f); },
           nb::arg("out"), nb::arg("pred"), nb::arg("on_true"), nb::arg("on_false"))
      .def("bn_stats", [](PyBuilder& b, const View& o, const View& i) { b.b().bn_stats(o, i); }, nb::arg("out"), nb::arg("in_"))
      .def("bn_aggr", [](PyBuilder& b, const View& o, const View& i) { b.b().bn_aggr(o, i); }, nb::arg("out"), nb::arg("in_"))
      .def("memset", [](PyBuilder& b, const View& o, float v, std::optional<std::string> e) { b.b().memset(o, v, opts(e, -1)); },
           nb::arg("out"), nb::arg("value"), nb::arg("engine") = nb::none())
      .def("activation", [](PyBuilder& b, const View& o, const View& i, const std::string& f, nb::handle scale,
                            nb::handle bias, std::optional<View> accum) {
        b.b().activation(o, i, act(f), scalar(scale), scalar(bias), accum ? &*accum : nullptr); },
        nb::arg("out"), nb::arg("in_"), nb::arg("func"), nb::arg("scale") = 1.0f, nb::arg("bias") = 0.0f,
        nb::arg("accum") = nb::none())
      .def("iota", [](PyBuilder& b, const View& o, int32_t base, int32_t pm, std::vector<int32_t> fm) {
        b.b().iota(o, base, pm, std::move(fm)); },
        nb::arg("out"), nb::arg("base") = 0, nb::arg("partition_multiplier") = 0,
        nb::arg("free_multipliers") = std::vector<int32_t>{1})
      .def("partition_reduce", [](PyBuilder& b, const View& o, const View& i, const std::string& op) {
        b.b().partition_reduce(o, i, alu(op)); }, nb::arg("out"), nb::arg("in_"), nb::arg("op"))
      .def("partition_broadcast", [](PyBuilder& b, const View& o, const View& i) { b.b().partition_broadcast(o, i); },
           nb::arg("out"), nb::arg("in_"))
      .def("gather", [](PyBuilder& b, const View& o, const View& i, const View& idx) { b.b().gather(o, i, idx); },
           nb::arg("out"), nb::arg("in_"), nb::arg("index"))
      .def_prop_ro("instructions", [](PyBuilder& b) { return b.b().instructions(); })
      .def("build", [](PyBuilder& b) {
        b.rings.clear();  // their tiles are freed while the builder still exists
        PyProgram p{b.b().build(), b.chip};
        b.kb.reset();
        return p; });
}

trnsim::bindings::Register reg{40, bind};

}  // namespace
