// Python bindings of the GPU baseline: trnsim._core.gpu. A model is a preset of configs/models
// or a config.json path (workloads::load_model); results come back as JSON text.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <nlohmann/json.hpp>

#include "registry.h"
#include "trnsim/workloads/gpu_step_cost.h"
#include "trnsim/workloads/offline_throughput.h"

namespace nb = nanobind;
using namespace trnsim;
using namespace trnsim::workloads;

namespace {

std::string offline(const std::string& model, const std::string& system, int tp, const std::string& dtype,
                    const std::string& weights, const std::string& kv_dtype, int64_t input, int64_t output,
                    int64_t max_batch, int64_t max_num_tokens) {
  Deployment d;
  d.system = system;
  d.tp = tp;
  d.dtype = dtype;
  d.weights = weights;
  d.kv_dtype = kv_dtype;
  const auto cost = make_gpu_step_cost(load_model(model), d);
  OfflineOptions o;
  o.input_tokens = input;
  o.output_tokens = output;
  o.max_batch = max_batch;
  o.max_num_tokens = max_num_tokens;
  const OfflineThroughput r = offline_throughput(*cost, o);
  const double t = r.step.time.value() * 1e-9;
  return nlohmann::json{{"kind", "llm"},
                        {"system", system},
                        {"tp", tp},
                        {"batch", r.batch},
                        {"batch_limit", r.limit},
                        {"step_time_s", t},
                        {"time_s", t},
                        {"output_tokens_per_s", r.output_tokens_per_s},
                        {"energy_per_output_token_j", r.energy_per_output_token_j},
                        {"average_power_w", t > 0 ? r.step.energy.value() / t : 0.0},
                        {"breakdown_s", {{"matmul", r.step.matmul.value() * 1e-9}, {"attention", r.step.attention.value() * 1e-9},
                                         {"collective", r.step.collective.value() * 1e-9}, {"other", r.step.other.value() * 1e-9}}}}
      .dump();
}

// One GEMM of rows x k by k x n on each of tp GPUs at the baseline's efficiency curve (time and the
// dense-peak fraction it reaches), for bench/gpu_step_breakdown.py's efficiency-by-size table.
std::string gemm(const std::string& model, const std::string& system, int tp, const std::string& dtype, double rows,
                 double k, double n) {
  Deployment d;
  d.system = system;
  d.tp = tp;
  d.dtype = d.weights = d.kv_dtype = dtype;
  const auto cost = make_gpu_step_cost(load_model(model), d);
  const auto& g = dynamic_cast<const GpuStepCost&>(*cost);
  const double t = g.gemm_cost(rows, k, n).time.value() * 1e-9;
  return nlohmann::json{{"kind", "kernel"}, {"time_s", t}, {"tflops", 2 * rows * k * n / t / 1e12}}.dump();
}

void bind(nb::module_& root) {
  nb::module_ m = root.def_submodule("gpu", "GPU baseline (per-op roofline)");
  m.def("offline", &offline, nb::arg("model"), nb::arg("system"), nb::arg("tp"), nb::arg("dtype"), nb::arg("weights"),
        nb::arg("kv_dtype"), nb::arg("input_tokens"), nb::arg("output_tokens"), nb::arg("max_batch") = 2048,
        nb::arg("max_num_tokens") = 8192,
        "Offline (max-load) throughput of a model on a GPU system; JSON text");
  m.def("gemm", &gemm, nb::arg("model"), nb::arg("system"), nb::arg("tp"), nb::arg("dtype"), nb::arg("rows"), nb::arg("k"),
        nb::arg("n"), "One GEMM (rows x k by k x n per GPU) at the GPU baseline's efficiency; JSON text");
}

trnsim::bindings::Register reg{80, bind};

}  // namespace
