// `trnsim convert` / trnsim.convert: an ONNX model compiled with quantised weights (and/or
// 4:16 sparsity) and saved as a program (.tpg), with what it costs in accuracy and what it
// saves in size and time, all measured: the fp32 model and the converted one are compiled for
// the same chip and policy and run functionally on the same inputs (the calibration inputs,
// else seeded random inputs). With quantised activations, a first run of the model records
// the range of every MatMul input on the calibration inputs.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/compiled_model.h"
#include "trnsim/hw/chip_spec.h"
#include "trnsim/runtime/npz.h"

namespace trnsim::runtime {

struct ConvertRequest {
  std::string model;                   // ONNX file
  std::string output;                  // .tpg to write ("" = do not save)
  compiler::CompileOptions options;    // chip-independent compile options, with .quant set
  std::string calibrate;               // .npz of calibration inputs ("" = seeded random inputs)
  uint64_t seed = 0;
};

// The report (JSON: sizes in bytes, times in s, accuracy per output) and the converted model.
struct ConvertResult {
  nlohmann::json report;
  compiler::CompiledModel model;
};

ConvertResult convert_model(const ConvertRequest& r, const hw::ChipSpec& chip);

// Accuracy of `got` against `ref`: cosine similarity, max |error|, relative L2 error.
nlohmann::json accuracy(const std::vector<float>& ref, const std::vector<float>& got);

// Readable table of a convert report.
std::string convert_table(const nlohmann::json& report);

}  // namespace trnsim::runtime
