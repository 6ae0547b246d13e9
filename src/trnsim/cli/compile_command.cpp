// `trnsim compile model.onnx --chip trn2 --dtype bf16 -o model.tpg`: import and compile an ONNX
// model, save the program (compiler/compiled_model_io.h) and report what compiling cost: the
// time of each pass, the segments, instructions and bytes. `trnsim run model.tpg` runs it
// without compiling again. --inputs binds shape-operand inputs to their values (value
// specialisation), as `trnsim run --inputs` does.
#include <fmt/core.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "trnsim/cli/command.h"
#include "trnsim/cli/compile_args.h"
#include "trnsim/common/error.h"
#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/compiled_model_io.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/npz.h"
#include "trnsim/runtime/value_specialisation.h"
#include "trnsim/common/json_text.h"
#include "trnsim/common/progress.h"

namespace trnsim::cli {
namespace {

struct CompileArgs {
  std::string model, chip = "trn2", dtype = "fp32", inputs, output;
  int64_t batch = 1;
  int cores = 0;
  std::vector<std::string> dims;
  bool json = false;
};

int compile_model(const CompileArgs& a) {
  const hw::ChipSpec chip = hw::load_chip(a.chip);
  const progress::Scope shown(progress::command_sink(a.json));
  const compiler::CompileOptions opt = compile_options(a.dtype, a.batch, a.cores, a.dims);
  const auto npz = a.inputs.empty() ? std::map<std::string, runtime::NpyArray>{} : runtime::read_npz(a.inputs);
  const runtime::SpecialisedModel sm = runtime::compile_specialised(compiler::import_onnx_file(a.model), chip, opt, npz);
  const compiler::CompiledModel& cm = sm.model;
  compiler::save_compiled(cm, chip, a.output);
  const uintmax_t file_bytes = std::filesystem::file_size(a.output);

  size_t kernels = 0, instructions = 0;
  for (const auto& s : cm.segments) {
    if (s.kind != compiler::Segment::Kind::Kernel) continue;
    ++kernels;
    instructions += s.program.instruction_count();
  }
  const size_t aliases = cm.segments.size() - kernels;
  if (a.json) {
    nlohmann::json j;
    j["model"] = a.model;
    j["output"] = a.output;
    j["chip"] = cm.chip;
    j["dtype"] = std::string(compiler::policy_name(cm.policy));
    j["compile_time_s"] = cm.compile_time_s;
    j["passes"] = nlohmann::json::array();
    for (const auto& p : cm.passes) j["passes"].push_back({{"name", p.name}, {"time_s", p.seconds}});
    j["segments"] = cm.segments.size();
    j["kernels"] = kernels;
    j["aliases"] = aliases;
    j["instructions"] = instructions;
    j["file_bytes"] = file_bytes;
    j["weight_bytes"] = cm.hbm.weight_bytes;
    j["io_bytes"] = cm.hbm.io_bytes;
    j["peak_activation_bytes"] = cm.hbm.peak_activation_bytes;
    j["specialized_inputs"] = sm.specialised;
    std::cout << json_text(j, 2) << "\n";
    return 0;
  }
  fmt::print("compiled {} for {} (dtype {}) in {:.3f} s -> {} ({:.2f} MB)\n", a.model, cm.chip,
             compiler::policy_name(cm.policy), cm.compile_time_s, a.output, file_bytes / 1e6);
  fmt::print("{:<20} {:>10}\n", "pass", "time_ms");
  for (const auto& p : cm.passes) fmt::print("{:<20} {:>10.3f}\n", p.name, p.seconds * 1e3);
  fmt::print("segments {} ({} kernels, {} aliases), {} instructions\n", cm.segments.size(), kernels, aliases, instructions);
  fmt::print("HBM: weights {:.2f} MB, inputs+outputs {:.3f} MB, peak activations {:.3f} MB\n", cm.hbm.weight_bytes / 1e6,
             cm.hbm.io_bytes / 1e6, cm.hbm.peak_activation_bytes / 1e6);
  for (const auto& n : sm.specialised) fmt::print("specialised on the value of input {}\n", n);
  return 0;
}

Register reg{{"compile",
              [](CLI::App& app) -> std::function<int()> {
                auto a = std::make_shared<CompileArgs>();
                app.add_option("model", a->model, "ONNX model file")->required();
                app.add_option("-o,--output", a->output, "the compiled program to write (run it with `trnsim run FILE`)")->required();
                app.add_option("--chip", a->chip, "chip preset (trn1, inf2, trn2, trn3) or a YAML file")->capture_default_str();
                app.add_option("--dtype", a->dtype, "dtype policy: fp32, bf16 (bf16 matmul inputs, fp32 accumulation), fp8")->capture_default_str();
                app.add_option("--batch", a->batch, "size of symbolic leading (batch) axes")->capture_default_str();
                app.add_option("--cores", a->cores, "NeuronCores to split each node's work across (0: all of the chip's)")->capture_default_str();
                app.add_option("--dim", a->dims, "size of another symbolic axis, NAME=SIZE (repeatable)");
                app.add_option("--inputs", a->inputs, ".npz whose shapes bind the inputs and whose values bind shape-operand inputs");
                app.add_flag("--json", a->json, "print the compile report as JSON");
                return [a] { return compile_model(*a); };
              },
              "Compile an ONNX model for a chip and save the program"}};

}  // namespace
}  // namespace trnsim::cli
