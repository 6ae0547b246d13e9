#include "trnsim/cli/run_tensor_parallel.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>

#include "trnsim/common/error.h"
#include "trnsim/compiler/compiled_model_io.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/npz.h"
#include "trnsim/runtime/random_inputs.h"
#include "trnsim/runtime/tensor_parallel_model.h"
#include "trnsim/common/json_text.h"

namespace trnsim::cli {

int run_tensor_parallel(const TensorParallelArgs& a) {
  if (a.system.empty())
    throw ConfigError(fmt::format("--tp {} needs --system: the chips and the fabric between them (e.g. --system trn2.48xlarge)", a.tp));
  if (a.dump_ir)
    throw UnsupportedError("unsupported: --dump-ir with --tp (the split has one IR per rank; run without --tp for the single-chip passes)");
  if (compiler::is_compiled_file(a.model))
    throw UnsupportedError(fmt::format("unsupported: --tp on a compiled program '{}': the split needs the ONNX model", a.model));
  const hw::SystemSpec sys = hw::load_system(a.system);
  if (!a.chip.empty() && hw::load_chip(a.chip).name != sys.chip.name)
    throw ConfigError(fmt::format("--chip {} with --tp: the chips are the system's ({} has {}); leave --chip out", a.chip, sys.name, sys.chip.name));
  if (a.timing_only && !a.inputs.empty())
    throw ConfigError("--inputs with --timing-only: timing mode uses no data");
  runtime::TpOptions o;
  o.tp = a.tp;
  o.lnc = a.lnc;
  o.compile = a.compile;
  o.all_ranks = !a.timing_only;  // timing: rank 0 stands for all (identical shapes)
  const std::map<std::string, runtime::NpyArray> npz = a.inputs.empty() ? std::map<std::string, runtime::NpyArray>{} : runtime::read_npz(a.inputs);
  for (const auto& [name, arr] : npz)  // the file's shapes bind symbolic axes, as for one chip
    if (!o.compile.input_shapes.count(name)) o.compile.input_shapes[name] = arr.shape;
  runtime::TensorParallelModel m(compiler::import_onnx_file(a.model), sys, o);
  const auto mode = a.timing_only ? core::Mode::Timing : core::Mode::Functional;
  std::map<std::string, std::vector<float>> in;
  if (!a.timing_only) in = a.inputs.empty() ? runtime::random_inputs(m.single_chip(), a.seed) : runtime::model_inputs(npz, m.single_chip(), a.inputs);
  runtime::TpRunOutput out = m.run(in, mode, !a.trace.empty());
  if (!a.trace.empty()) {
    std::ofstream f(a.trace);
    if (!f) throw Error("cannot write trace '" + a.trace + "'");
    runtime::write_tp_trace(f, out.report);
    f.close();
    if (!f) throw Error("writing the trace '" + a.trace + "' failed (disk full?)");
  }
  const auto& shapes = m.single_chip().shapes;
  if (a.json) {
    nlohmann::json j = runtime::tp_report_json(out.report);
    j["model"] = a.model;
    for (const auto& [n, v] : out.outputs) {
      double sum = 0, amax = 0;
      for (float x : v) sum += x, amax = std::max(amax, std::fabs(static_cast<double>(x)));
      j["outputs"][n] = {{"shape", shapes.at(n)}, {"mean", v.empty() ? 0.0 : sum / static_cast<double>(v.size())}, {"max_abs", amax}};
    }
    std::cout << json_text(j, 2) << "\n";
    return 0;
  }
  fmt::print("model {} split over {} logical NeuronCores (lnc {}) on {} chips\n", a.model, a.tp, out.report.lnc, out.report.chips);
  std::cout << runtime::tp_report_table(out.report);
  for (const auto& [n, v] : out.outputs) {
    double sum = 0;
    for (float x : v) sum += x;
    fmt::print("output {} {} mean {:.6g}\n", n, compiler::shape_str(shapes.at(n)), v.empty() ? 0.0 : sum / static_cast<double>(v.size()));
  }
  return 0;
}

}  // namespace trnsim::cli
