// `trnsim run model.onnx`: import, compile, simulate, report. Latency, throughput, the per-op
// breakdown, engine utilisation and HBM traffic; --json for the same as JSON, --dump-ir for
// the IR after every compiler pass, --trace for a Perfetto timeline of the whole model.
// Comparison against onnxruntime (--check) runs on the Python side: `trnsim run --check` hands
// over to `python -m trnsim run ... --check` (python_handoff.h).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <optional>

#include "trnsim/cli/command.h"
#include "trnsim/cli/compile_args.h"
#include "trnsim/cli/python_handoff.h"
#include "trnsim/cli/run_tensor_parallel.h"
#include "trnsim/common/error.h"
#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/hw/energy_loader.h"
#include "trnsim/runtime/run_power_cap.h"
#include "trnsim/hw/logical_cores.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/in_flight_load.h"
#include "trnsim/runtime/loaded_model.h"
#include "trnsim/runtime/random_inputs.h"
#include "trnsim/runtime/report_json.h"
#include "trnsim/common/progress.h"
#include "trnsim/compiler/compiled_model_io.h"
#include "trnsim/runtime/npz.h"
#include "trnsim/runtime/value_specialisation.h"
#include "trnsim/common/json_text.h"

namespace trnsim::cli {
namespace {

struct RunArgs {
  std::string model, chip = "trn2", dtype = "fp32", inputs, trace, sparsity;
  int64_t batch = 1;
  int cores = 0, lnc = 0;
  uint64_t seed = 0;
  std::vector<std::string> dims;
  bool timing_only = false, dump_ir = false, json = false, check = false;
  CLI::Option* chip_option = nullptr;   // to tell an explicit --chip from the default
  CLI::Option* batch_option = nullptr;  // and an explicit --batch
  double clock_scale = 1, power_cap = 0;
  std::string power_cap_scope = "chip";
  CLI::Option* dtype_option = nullptr;  // options that only compiling takes: refused for a .tpg
  CLI::Option* cores_option = nullptr;
  CLI::Option* lnc_option = nullptr;
  std::string system;  // --tp: tensor-parallel over chips of this system (run_tensor_parallel.h)
  int tp = 0;
  int in_flight = 0;  // --in-flight: requests kept in flight over the model copies (0: not given)
  CLI::Option* in_flight_option = nullptr;
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

// --check: the reference, onnxruntime, is a Python package, so the run goes to `python -m
// trnsim run ... --check` (run_check.py) with the same model, chip, policy and inputs.
[[noreturn]] void check_with_python(const RunArgs& a) {
  auto refuse = [](const char* what) {
    throw UnsupportedError(fmt::format("unsupported: --check with {}: the check runs the model functionally on one chip with all its cores", what));
  };
  if (a.tp != 0 || !a.system.empty()) refuse("--tp/--system");
  if (a.timing_only) refuse("--timing-only (there are no outputs to compare)");
  if (a.dump_ir) refuse("--dump-ir");
  if (!a.trace.empty()) refuse("--trace");
  if (a.cores != 0) refuse("--cores");
  if (a.in_flight_option && a.in_flight_option->count() > 0) refuse("--in-flight (a load is a timing figure)");
  if (compiler::is_compiled_file(a.model)) refuse("a saved program (onnxruntime needs the .onnx file)");
  std::vector<std::string> args{"run", a.model, "--chip", a.chip, "--dtype", a.dtype, "--seed", std::to_string(a.seed), "--check"};
  if (a.batch_option && a.batch_option->count() > 0) args.insert(args.end(), {"--batch", std::to_string(a.batch)});
  for (const auto& d : a.dims) args.insert(args.end(), {"--dim", d});
  if (!a.inputs.empty()) args.insert(args.end(), {"--inputs", a.inputs});
  if (a.json) args.push_back("--json");
  exec_python_module(args);
}

int run_model(const RunArgs& a) {
  const progress::Scope shown(progress::command_sink(a.json));
  if (a.check) check_with_python(a);
  // A saved program (`trnsim compile -o x.tpg`) runs on the chip it was compiled for.
  const bool compiled_file = compiler::is_compiled_file(a.model);
  const bool chip_given = a.chip_option && a.chip_option->count() > 0;
  // --system without --tp: one chip of that system (said on stderr, so --json stays clean).
  const bool one_of_system = !a.system.empty() && a.tp == 0;
  const hw::ChipSpec chip = one_of_system ? hw::load_system(a.system).chip
                            : hw::load_chip(compiled_file && !chip_given ? compiler::read_compiled_header(a.model).chip : a.chip);
  if (one_of_system) {
    if (chip_given && hw::load_chip(a.chip).name != chip.name)
      throw ConfigError(fmt::format("--chip {} and --system {} (whose chips are {}) disagree; --system without --tp runs one chip of it", a.chip, a.system, chip.name));
    fmt::print(stderr, "note: --system {} without --tp: running on one of its chips ({}); add --tp N to split the model across N chips\n", a.system, chip.name);
  }
  const int lnc = hw::resolve_lnc(chip, a.lnc);
  if (a.tp != 0 && a.cores != 0)
    throw ConfigError("--cores with --tp: each rank runs on one logical NeuronCore (--lnc sets its size)");
  compiler::CompileOptions opt = compile_options(a.dtype, a.batch, a.tp != 0 ? 0 : hw::physical_cores(chip, a.cores, lnc), a.dims);
  apply_sparsity_option(opt, a.sparsity);
  opt.keep_ir = a.dump_ir;
  opt.timing_only = a.timing_only;  // no weight values are read, so none are computed
  if (a.tp != 0 && (a.clock_scale != 1 || a.power_cap > 0))
    throw UnsupportedError("unsupported: --clock-scale/--power-cap with --tp (one chip only for now)");
  const bool loaded = a.in_flight_option && a.in_flight_option->count() > 0;
  if (loaded && a.in_flight < 1)
    throw ConfigError(fmt::format("--in-flight {}: expected a positive count of requests kept in flight", a.in_flight));
  if (loaded && a.tp != 0) throw UnsupportedError("unsupported: --in-flight with --tp (one model copy per chip set; load it with `trnsim serve`)");
  if (loaded && compiled_file)
    throw UnsupportedError(fmt::format("unsupported: {}: --in-flight with a saved program (its cores per copy are not recorded): run the .onnx with --cores N", a.model));
  if (a.tp != 0 && !a.sparsity.empty()) throw UnsupportedError("unsupported: --sparsity with --tp (one chip only for now)");
  if (a.tp != 0)  // tensor-parallel across chips of --system
    return run_tensor_parallel({a.model, a.system, a.tp, opt, a.seed, a.timing_only, a.json, a.inputs, a.trace,
                                chip_given ? a.chip : std::string(), a.dump_ir, a.lnc});
  const std::map<std::string, runtime::NpyArray> npz = a.inputs.empty() ? std::map<std::string, runtime::NpyArray>{} : runtime::read_npz(a.inputs);
  std::vector<std::string> specialised;
  compiler::CompiledModel cm;
  if (compiled_file) {
    // A saved program was compiled with its dtype, shapes and cores: options that would
    // change them cannot apply, and ignoring them silently would report another model.
    for (auto [opt, name] : {std::pair{a.dtype_option, "--dtype"}, {a.batch_option, "--batch"}, {a.cores_option, "--cores"}, {a.lnc_option, "--lnc"}})
      if (opt && opt->count() > 0)
        throw Error(fmt::format("{}: {} does not apply to a saved program (it was fixed when compiled): compile the .onnx again with it", a.model, name));
    if (!a.sparsity.empty())
      throw Error(fmt::format("{}: --sparsity does not apply to a saved program: `trnsim convert --sparsity 4:16` the .onnx", a.model));
    if (!a.dims.empty())
      throw Error(fmt::format("{}: --dim does not apply to a saved program (its shapes were fixed when compiled)", a.model));
    cm = compiler::load_compiled(a.model, chip);
  } else {
    runtime::SpecialisedModel sm = runtime::compile_specialised(compiler::import_onnx_file(a.model), chip, opt, npz);
    cm = std::move(sm.model);
    specialised = std::move(sm.specialised);
  }
  // Throughput counts the samples one run processes: the leading axis of the first input
  // (as bound by --batch/--dim when symbolic, or fixed by the model).
  int64_t batch = a.batch;
  if (!cm.inputs.empty()) {
    const auto& s = cm.shapes.at(cm.inputs.front());
    if (!s.empty() && s.front() > 0) batch = s.front();
  }
  if (a.dump_ir) std::cout << cm.dump_ir();
  const runtime::RunPower power = runtime::run_power(cm, chip, {a.clock_scale, a.power_cap, a.power_cap_scope, a.system});
  const hw::ChipSpec& run_chip = power.chip;
  runtime::LoadedModel lm(cm, run_chip);
  const auto mode = a.timing_only ? core::Mode::Timing : core::Mode::Functional;
  runtime::RunOutput out = lm.run(a.timing_only ? std::map<std::string, std::vector<float>>{}
                                  : a.inputs.empty() ? runtime::random_inputs(cm, a.seed) : runtime::model_inputs(npz, cm, a.inputs, specialised),
                                  mode, !a.trace.empty());
  if (!a.trace.empty()) {
    std::ofstream f(a.trace);
    if (!f) throw Error("cannot write trace '" + a.trace + "'");
    runtime::write_timeline_trace(f, out.report);
    f.close();
    if (!f) throw Error("writing the trace '" + a.trace + "' failed (disk full?)");
  }
  // --in-flight: the run's time is one request's execution; copies of --cores cores each fill the chip.
  std::optional<runtime::InFlightLoad> load;
  if (loaded) load = runtime::in_flight_load(out.report.time_s, batch, a.in_flight, runtime::copy_slots(chip, a.cores, a.lnc), runtime::host_io_seconds(chip, cm));
  if (a.json) {
    auto j = runtime::report_json(out.report, batch);
    if (load) j["load"] = runtime::load_json(*load);
    j["model"] = a.model;
    if (!compiled_file) {
      j["lnc"] = lnc;
      j["logical_cores"] = a.cores == 0 ? chip.neuron_cores / lnc : a.cores;
    }
    j["clock_scale"] = run_chip.energy.clock_scale;
    j["voltage_scale"] = run_chip.energy.voltage_scale;
    if (power.capped) j["power_cap"] = power.json();
    j["dtype"] = std::string(compiler::policy_name(cm.policy));
    for (const auto& [n, v] : out.outputs) {
      const OutputStats st = output_stats(v);
      j["outputs"][n] = {{"shape", cm.shapes.at(n)}, {"mean", st.mean}, {"max_abs", st.max_abs}};
    }
    std::cout << json_text(j, 2) << "\n";
    return 0;
  }
  fmt::print("model {} ({} nodes after compilation, dtype {})\n", a.model, cm.graph.nodes.size(), compiler::policy_name(cm.policy));
  std::cout << runtime::report_table(out.report, batch);
  if (load) std::cout << runtime::load_text(*load);
  if (a.clock_scale != 1 || a.power_cap > 0)
    fmt::print("clock scale  {:.4f} (voltage {:.4f}){}\n", run_chip.energy.clock_scale, run_chip.energy.voltage_scale,
               a.power_cap > 0 ? fmt::format(": {} cap {:g} W = {:.1f} W per chip; unthrottled {:.1f} W, {:.3f} us{}",
                                             a.power_cap_scope, a.power_cap, power.scope.chip_cap_w(), power.throttle.at_top.power_w(),
                                             power.throttle.at_top.time_s * 1e6, power.throttle.met ? "" : " (CAP NOT MET)")
                               : std::string());
  for (const auto& [n, v] : out.outputs)
    fmt::print("output {} {} mean {:.6g}\n", n, compiler::shape_str(cm.shapes.at(n)), output_stats(v).mean);
  return 0;
}

Register reg{{"run",
              [](CLI::App& app) -> std::function<int()> {
                auto a = std::make_shared<RunArgs>();
                app.add_option("model", a->model, "ONNX model file, or a program saved by `trnsim compile -o`")->required();
                a->chip_option = app.add_option("--chip", a->chip, "chip preset (trn1, inf2, trn2, trn3) or a YAML file")->capture_default_str();
                a->dtype_option = app.add_option("--dtype", a->dtype, "dtype policy: fp32, bf16 (bf16 matmul inputs, fp32 accumulation), fp8")->capture_default_str();
                a->batch_option = app.add_option("--batch", a->batch, "size of symbolic leading (batch) axes")->capture_default_str();
                a->cores_option = app.add_option("--cores", a->cores, "logical NeuronCores to split each node's work across (0: all of the chip's)")->capture_default_str();
                a->lnc_option = app.add_option("--lnc", a->lnc, "logical NeuronCore size: physical cores per logical core, 1 or 2 (0: the chip's default, 2 on trn2/trn3)")
                                    ->capture_default_str();
                app.add_option("--dim", a->dims, "size of another symbolic axis, NAME=SIZE (repeatable)");
                app.add_option("--inputs", a->inputs, "inputs as .npz (np.savez / np.savez_compressed), arrays named after the model's inputs");
                app.add_option("--seed", a->seed, "seed of the random inputs")->capture_default_str();
                app.add_option("--sparsity", a->sparsity, "4:16: prune MatMul weights and run TensorE's sparse path (Trn2/Trn3, --dtype bf16)");
                app.add_flag("--timing-only", a->timing_only, "no data: timing only");
                app.add_flag("--dump-ir", a->dump_ir, "print the IR after every compiler pass");
                app.add_option("--trace", a->trace, "write a Perfetto / Chrome trace JSON of the whole model");
                app.add_flag("--json", a->json, "print the report as JSON");
                app.add_option("--system", a->system, "system preset or YAML file (with --tp)");
                app.add_option("--clock-scale", a->clock_scale, "run at this fraction of the published clocks (DVFS)")->capture_default_str();
                auto* cap = app.add_option("--power-cap", a->power_cap, "power cap in W (per --power-cap-scope): throttle the clocks to fit");
                app.add_option("--power-cap-scope", a->power_cap_scope, "chip, instance or rack (less the hosts' and rack's fixed power from --system, the rest shared by the chips)")
                    ->capture_default_str()
                    ->needs(cap);  // alone it did nothing
                a->in_flight_option = app.add_option("--in-flight", a->in_flight,
                                                     "requests kept in flight (closed loop), round-robin over the model copies that fit "
                                                     "(one per --cores logical cores): reports p50/p99 latency and throughput under that load");
                app.add_option("--tp", a->tp, "tensor-parallel: split the model Megatron-style across this many chips of --system");
                app.add_flag("--check", a->check, "compare every output with onnxruntime (runs `python -m trnsim run ... --check`)");
                return [a] { return run_model(*a); };
              },
              "Compile an ONNX model and run it on a simulated chip"}};

}  // namespace
}  // namespace trnsim::cli
