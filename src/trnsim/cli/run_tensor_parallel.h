// `trnsim run model.onnx --system NAME --tp N`: the model split Megatron-style across N chips
// of the system (runtime::TensorParallelModel), with the per-op compute, each all-reduce and
// all-gather and the communication share as a table or, with --json, as JSON. --inputs takes
// an .npz as for one chip; --trace writes rank 0's timeline with the collectives' track.
// Options the split does not apply (--dump-ir, --chip other than the system's, a compiled
// program instead of an ONNX model) are errors, not silently ignored.
#pragma once
#include <cstdint>
#include <string>

#include "trnsim/compiler/compile.h"

namespace trnsim::cli {

struct TensorParallelArgs {
  std::string model, system;
  int tp = 0;
  compiler::CompileOptions compile;
  uint64_t seed = 0;
  bool timing_only = false, json = false;
  std::string inputs, trace;  // an .npz of the inputs; a trace file to write
  std::string chip;           // --chip when given explicitly (must be the system's chip)
  bool dump_ir = false;       // refused: the split has no single IR dump
  int lnc = 0;                // logical NeuronCore size (0: the chip's default): one rank per logical core
};

int run_tensor_parallel(const TensorParallelArgs& a);

}  // namespace trnsim::cli
