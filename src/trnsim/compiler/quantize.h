// Weight quantisation and 4:16 structured sparsity as compiler passes (`trnsim convert`,
// `trnsim run --sparsity`). Run after the front passes (constant folding would undo them):
//  - sparsify: MatMul weights (constant 2-D [K, N], K a multiple of 16) keep the 4 largest |w|
//    of each 16 along K per column; the node is marked `sparse_4_16` and lowered on TensorE's
//    sparse path (lower_sparse_matmul.h).
//  - quantize: MatMul weights and embedding tables (Gather of a constant 2-D table) become
//    constants of a narrow type (int8/fp8 codes with fp32 scales applied after the MatMul or
//    the Gather; fp16/bf16 values; MX element codes with E8M0 scales per 32 along K, a
//    MatMulMX node for MatMuls (MX activations or weight-only), dequantised on chip for tables
//    and convs; on chips without MX, the dequantised values in bf16). With `activations`, MatMul inputs are quantised too with
//    calibrated per-tensor ranges (int8, fp8).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "trnsim/compiler/compiled_model.h"
#include "trnsim/compiler/ir.h"
#include "trnsim/hw/chip_spec.h"

namespace trnsim::compiler {

enum class QuantFormat : uint8_t { None, FP16, BF16, FP8, INT8, MXFP8, MXFP4 };
QuantFormat parse_quant_format(std::string_view s);  // UnsupportedError listing the names
std::string_view quant_format_name(QuantFormat f);

struct QuantizeOptions {
  QuantFormat format = QuantFormat::None;
  bool per_channel = true;    // int8/fp8: one scale per output channel (per row of a table); false: per tensor
  bool activations = false;   // int8/fp8: quantise MatMul inputs too, with `ranges`
  // MX weights: MatMul inputs quantised to this MX format (MXFP8 or MXFP4) on chip by
  // QuantizeMX, per block of 32 along K (no calibration), and the MatMul on TensorE's MX path.
  // None (weight-only): activations stay in the policy's dtype; each weight block is
  // dequantised once per load on VectorE into SBUF and reused by every row tile (TensorE's MX
  // matmul takes MX on both sides: no mixed bf16 x MX mode is published).
  QuantFormat mx_activations = QuantFormat::None;
  bool calibrate = false;     // quantise nothing: make the inputs it would quantise graph outputs
  std::map<std::string, double> ranges;  // activation tensor -> calibrated max |x|
  bool sparse_4_16 = false;   // prune MatMul weights 4:16 (the sparsify pass)
};

// `--activations VALUE`: "" (int8/fp8: the weight format) or mxfp8 / mxfp4 (MX weights) into o.
void apply_activations_option(QuantizeOptions& o, std::string_view value);

// The chip can run what was asked: MX formats need an MX TensorE (Trn3), 4:16 sparsity a
// sparse TensorE (Trn2/Trn3) and 16-bit matmul operands; int8 codes are not exact in fp8
// operands. UnsupportedError naming the chip or the option.
void check_quantize_options(const QuantizeOptions& o, const hw::ChipSpec& chip, DTypePolicy policy);

// The chip takes the MX format of `o` (Trn3). Without it, weight-only MX weights are stored as
// their dequantised values in bf16 (quantize_graph's mx_on_chip false) with a warning.
bool mx_on_chip(const QuantizeOptions& o, const hw::ChipSpec& chip);
// One line per fallback the options cause on `chip` (printed by compile as `trnsim: warning:`,
// listed in the convert report).
std::vector<std::string> quantize_warnings(const QuantizeOptions& o, const hw::ChipSpec& chip);

// What the passes did, for the convert report.
struct QuantizeSummary {
  int weights = 0;            // constants quantised (MatMul weights and tables)
  int skipped = 0;            // eligible by op but not by shape (MX: K not a multiple of 32)
  int activations = 0;        // MatMul inputs quantised
  int sparse = 0;             // MatMuls on the sparse path
  std::vector<std::string> calibration_tensors;  // calibrate: the tensors made outputs
};

QuantizeSummary quantize_graph(Graph& g, const QuantizeOptions& o, bool mx_on_chip = true);
QuantizeSummary sparsify_graph(Graph& g);

}  // namespace trnsim::compiler
