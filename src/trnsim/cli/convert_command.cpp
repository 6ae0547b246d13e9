// `trnsim convert model.onnx -o model.tpg --quantize int8 [--calibrate inputs.npz]
// [--per-channel|--per-tensor] [--activations [mxfp8|mxfp4]] [--sparsity 4:16]`: quantise (and/or prune) the weights,
// compile for a chip, save the program (run it with `trnsim run model.tpg`) and report the
// size, the time and the accuracy against the fp32 model (runtime/model_convert.h).
#include <fmt/core.h>

#include <iostream>

#include "trnsim/cli/command.h"
#include "trnsim/cli/compile_args.h"
#include "trnsim/common/error.h"
#include "trnsim/common/json_text.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/model_convert.h"

namespace trnsim::cli {
namespace {

struct ConvertArgs {
  std::string model, output, chip = "trn2", dtype = "fp32", quantize, calibrate, sparsity;
  int64_t batch = 1;
  int cores = 0;
  uint64_t seed = 0;
  std::vector<std::string> dims;
  bool per_channel = false, per_tensor = false, activations = false, json = false;
  std::string activations_format;  // --activations VALUE (mxfp8 / mxfp4), empty for the bare flag
};

int convert(const ConvertArgs& a) {
  const hw::ChipSpec chip = hw::load_chip(a.chip);
  runtime::ConvertRequest r{a.model, a.output, compile_options(a.dtype, a.batch, a.cores, a.dims), a.calibrate, a.seed};
  apply_sparsity_option(r.options, a.sparsity);
  if (!a.quantize.empty()) r.options.quant.format = compiler::parse_quant_format(a.quantize);
  // Per channel by default: a few outlier columns make one scale per tensor lose accuracy
  // (MiniLM int8: cosine 0.973 per tensor, 0.9995 per channel).
  r.options.quant.per_channel = !a.per_tensor;
  if (a.activations) compiler::apply_activations_option(r.options.quant, a.activations_format);
  if ((a.per_channel || a.per_tensor || a.activations) && a.quantize.empty())
    throw ConfigError("convert: --per-channel, --per-tensor and --activations need --quantize FORMAT");
  if (a.per_channel && a.per_tensor) throw ConfigError("convert: --per-channel and --per-tensor exclude each other");
  const runtime::ConvertResult res = runtime::convert_model(r, chip);
  if (a.json) std::cout << json_text(res.report, 2) << "\n";
  else std::cout << runtime::convert_table(res.report);
  return 0;
}

Register reg{{"convert",
              [](CLI::App& app) -> std::function<int()> {
                auto a = std::make_shared<ConvertArgs>();
                app.add_option("model", a->model, "ONNX model file")->required();
                app.add_option("-o,--output", a->output, "the converted program to write (run it with `trnsim run FILE`)")->required();
                app.add_option("--quantize", a->quantize, "weight format: fp16, bf16, fp8, int8, mxfp8, mxfp4 (MX: Trainium3)");
                app.add_option("--calibrate", a->calibrate, ".npz of inputs: activation ranges and the accuracy check (else seeded random inputs)");
                app.add_flag("--per-channel", a->per_channel, "int8/fp8: a scale per output channel (per table row): the default");
                app.add_flag("--per-tensor", a->per_tensor, "int8/fp8: one scale per weight tensor instead of per channel");
                app.add_option_function<std::string>("--activations", [a](const std::string& v) { a->activations = true; a->activations_format = v; },
                                                     "quantise MatMul inputs too: bare for int8/fp8 (ranges calibrated on the inputs); mxfp8 or mxfp4 "
                                                     "with MX weights (QuantizeMX on chip, TensorE's MX matmul)")
                    ->expected(0, 1);
                app.add_option("--sparsity", a->sparsity, "4:16: prune MatMul weights and run TensorE's sparse path (Trn2/Trn3, --dtype bf16)");
                app.add_option("--chip", a->chip, "chip preset (trn1, inf2, trn2, trn3) or a YAML file")->capture_default_str();
                app.add_option("--dtype", a->dtype, "dtype policy: fp32, bf16 (bf16 matmul inputs, fp32 accumulation), fp8")->capture_default_str();
                app.add_option("--batch", a->batch, "size of symbolic leading (batch) axes")->capture_default_str();
                app.add_option("--cores", a->cores, "NeuronCores to split each node's work across (0: all of the chip's)")->capture_default_str();
                app.add_option("--dim", a->dims, "size of another symbolic axis, NAME=SIZE (repeatable)");
                app.add_option("--seed", a->seed, "seed of the random inputs (without --calibrate)")->capture_default_str();
                app.add_flag("--json", a->json, "print the report as JSON");
                return [a] { return convert(*a); };
              },
              "Quantise (int8, fp8, fp16, bf16, MX) and/or 4:16-prune an ONNX model's weights, save the program, report size/time/accuracy"}};

}  // namespace
}  // namespace trnsim::cli
