// `trnsim run model.onnx`: import, compile, simulate, report. Latency, throughput, the per-op
// breakdown, engine utilisation and HBM traffic; --json for the same as JSON, --dump-ir for
// the IR after every compiler pass, --trace for a Perfetto timeline of the whole model.
// Comparison against onnxruntime (--check) runs on the Python side: `python -m trnsim run`.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "trnsim/cli/command.h"
#include "trnsim/common/error.h"
#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/loaded_model.h"
#include "trnsim/runtime/random_inputs.h"
#include "trnsim/runtime/report_json.h"

namespace trnsim::cli {
namespace {

struct RunArgs {
  std::string model, chip = "trn2", dtype = "fp32", inputs, trace;
  int64_t batch = 1;
  uint64_t seed = 0;
  std::vector<std::string> dims;
  bool timing_only = false, dump_ir = false, json = false, check = false;
};

// What the command shows of an output: its mean and largest magnitude (one pass).
struct OutputStats {
  double mean = 0, max_abs = 0;
};
OutputStats output_stats(const std::vector<float>& v) {
  double sum = 0, amax = 0;
  for (float x : v) { sum += x; amax = std::max(amax, std::fabs(static_cast<double>(x))); }
  return {v.empty() ? 0.0 : sum / static_cast<double>(v.size()), amax};
}

int run_model(const RunArgs& a) {
  if (!a.inputs.empty())
    throw UnsupportedError("unsupported: --inputs in the C++ command (use `python -m trnsim run " + a.model + " --inputs ...`)");
  if (a.check)
    throw UnsupportedError("unsupported: --check in the C++ command (onnxruntime is a Python package: use `python -m trnsim run " + a.model + " --check`)");
  const hw::ChipSpec chip = hw::load_chip(a.chip);
  compiler::CompileOptions opt;
  opt.policy = compiler::parse_policy(a.dtype);
  opt.batch = a.batch;
  opt.keep_ir = a.dump_ir;
  for (const auto& d : a.dims) {
    auto eq = d.find('=');
    if (eq == std::string::npos) throw Error("--dim expects NAME=SIZE, got '" + d + "'");
    const std::string value = d.substr(eq + 1);
    char* end = nullptr;
    const long long size = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || size <= 0)
      throw Error("--dim " + d + ": SIZE must be a positive integer, got '" + value + "'");
    opt.dims[d.substr(0, eq)] = size;
  }
  compiler::CompiledModel cm = compiler::compile(compiler::import_onnx_file(a.model), chip, opt);
  // Throughput counts the samples one run processes: the leading axis of the first input
  // (as bound by --batch/--dim when symbolic, or fixed by the model).
  int64_t batch = a.batch;
  if (!cm.inputs.empty()) {
    const auto& s = cm.shapes.at(cm.inputs.front());
    if (!s.empty() && s.front() > 0) batch = s.front();
  }
  if (a.dump_ir) std::cout << cm.dump_ir();
  runtime::LoadedModel lm(cm, chip);
  const auto mode = a.timing_only ? core::Mode::Timing : core::Mode::Functional;
  runtime::RunOutput out = lm.run(a.timing_only ? std::map<std::string, std::vector<float>>{} : runtime::random_inputs(cm, a.seed), mode, !a.trace.empty());
  if (!a.trace.empty()) {
    std::ofstream f(a.trace);
    if (!f) throw Error("cannot write trace '" + a.trace + "'");
    runtime::write_timeline_trace(f, out.report);
  }
  if (a.json) {
    auto j = runtime::report_json(out.report, batch);
    j["model"] = a.model;
    j["dtype"] = a.dtype;
    for (const auto& [n, v] : out.outputs) {
      const OutputStats st = output_stats(v);
      j["outputs"][n] = {{"shape", cm.shapes.at(n)}, {"mean", st.mean}, {"max_abs", st.max_abs}};
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  fmt::print("model {} ({} nodes after compilation, dtype {})\n", a.model, cm.graph.nodes.size(), a.dtype);
  std::cout << runtime::report_table(out.report, batch);
  for (const auto& [n, v] : out.outputs)
    fmt::print("output {} {} mean {:.6g}\n", n, compiler::shape_str(cm.shapes.at(n)), output_stats(v).mean);
  return 0;
}

Register reg{{"run",
              [](CLI::App& app) -> std::function<int()> {
                auto a = std::make_shared<RunArgs>();
                app.add_option("model", a->model, "ONNX model file")->required();
                app.add_option("--chip", a->chip, "chip preset (trn1, inf2, trn2, trn3) or a YAML file")->capture_default_str();
                app.add_option("--dtype", a->dtype, "dtype policy: fp32, bf16 (bf16 matmul inputs, fp32 accumulation), fp8")->capture_default_str();
                app.add_option("--batch", a->batch, "size of symbolic leading (batch) axes")->capture_default_str();
                app.add_option("--dim", a->dims, "size of another symbolic axis, NAME=SIZE (repeatable)");
                app.add_option("--inputs", a->inputs, "inputs as .npz (Python command only)");
                app.add_option("--seed", a->seed, "seed of the random inputs")->capture_default_str();
                app.add_flag("--timing-only", a->timing_only, "no data: timing only");
                app.add_flag("--dump-ir", a->dump_ir, "print the IR after every compiler pass");
                app.add_option("--trace", a->trace, "write a Perfetto / Chrome trace JSON of the whole model");
                app.add_flag("--json", a->json, "print the report as JSON");
                app.add_flag("--check", a->check, "compare with onnxruntime (Python command only)");
                return [a] { return run_model(*a); };
              },
              "Compile an ONNX model and run it on a simulated chip"}};

}  // namespace
}  // namespace trnsim::cli
