// Python bindings of the LLM workloads: trnsim._core.llm. Results come out as the JSON text
// `trnsim llm --json` prints (llm_generation.h: one source of field names); python/trnsim/llm.py
// turns it into a dict.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fstream>

#include "registry.h"
#include "trnsim/common/error.h"
#include "trnsim/workloads/llm_run.h"

namespace nb = nanobind;
using namespace trnsim;
using namespace trnsim::workloads;

namespace {

std::string llm(const std::string& model, const std::string& system, int tp, int pp, int ep, int lnc,
                const std::string& dtype, const std::string& weights, const std::string& kv_dtype, int64_t batch,
                int64_t input, int64_t output, const std::string& trace, int64_t micro_batches, bool sequence_parallel,
                double clock_scale, const std::string& kv_buckets, int64_t seq_len, double power_cap,
                const std::string& power_cap_scope) {
  Deployment d{system, tp, pp, ep, lnc, dtype, weights, kv_dtype, sequence_parallel, clock_scale};
  GenerationRequest r{batch, input, output, micro_batches, default_kv_buckets(system, kv_buckets), seq_len};
  nb::gil_scoped_release nogil;
  const LlmRun run = run_llm(model, d, r, PowerCap{power_cap, power_cap_scope});
  if (!trace.empty()) {
    std::ofstream f(trace);
    f << run.trace().dump() << "\n";
    if (!f) throw ConfigError("trace " + trace + ": cannot write the file");
  }
  return run.json().dump();
}

std::string model_json(const std::string& name) {
  const ModelDesc m = load_model(name);
  nlohmann::json j{{"name", m.name},         {"family", m.family},
                   {"hidden", m.hidden},     {"layers", m.layers},
                   {"heads", m.heads},       {"kv_heads", m.kv_heads},
                   {"head_dim", m.head_dim}, {"vocab", m.vocab},
                   {"experts", m.moe.experts}, {"experts_per_token", m.moe.experts_per_token},
                   {"parameters", m.parameters()}, {"active_parameters", m.active_parameters()},
                   {"kv_elements_per_token", m.kv_elements_per_token()}, {"source", m.source}};
  return j.dump();
}

void bind(nb::module_& root) {
  nb::module_ m = root.def_submodule("llm", "LLM inference on model descriptions (trnsim llm)");
  m.def("llm", &llm, nb::arg("model"), nb::arg("system"), nb::arg("tp"), nb::arg("pp"), nb::arg("ep"), nb::arg("lnc"),
        nb::arg("dtype"), nb::arg("weights"), nb::arg("kv_dtype"), nb::arg("batch"), nb::arg("input"), nb::arg("output"),
        nb::arg("trace"), nb::arg("micro_batches"),
        nb::arg("sequence_parallel"), nb::arg("clock_scale") = 1.0,
        nb::arg("kv_buckets") = "", nb::arg("seq_len") = 0, nb::arg("power_cap") = 0.0,
        nb::arg("power_cap_scope") = "chip");
  m.def("model", &model_json, nb::arg("name_or_path"));
  m.def("model_presets", &model_preset_names);
}

bindings::Register reg{80, bind};

}  // namespace
