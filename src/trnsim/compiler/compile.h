// compile(graph, chip, options) -> CompiledModel: the named pass pipeline, with check() of
// the IR after every pass and the wall time of each.
//   bind-inputs, shape-inference, constant-folding, decomposition, constant-folding,
//   attention-fusion, fusion, dead-code, core-split, memory-planning, lowering (tiling +
//   instruction emission per node).
#pragma once
#include <map>
#include <string>

#include "trnsim/compiler/compiled_model.h"
#include "trnsim/compiler/quantize.h"
#include "trnsim/hw/chip_spec.h"

namespace trnsim::compiler {

struct CompileOptions {
  DTypePolicy policy = DTypePolicy::FP32;
  int64_t batch = 1;                          // symbolic leading axes of inputs
  std::map<std::string, int64_t> dims;        // other symbolic axes by name
  std::map<std::string, Shape> input_shapes;  // exact input shapes (win over the above)
  bool fuse = true;                           // attention and epilogue fusion
  bool fuse_qkv = true;                       // with fuse: Q/K/V projections as one MatMul (fuse_qkv.h)
  int cores = 0;                              // NeuronCores to split nodes across; 0 = all of the chip's
  bool resident_activations = true;           // matmul results kept in SBUF for matmul readers (sbuf_residency.h)
  bool norm_prologue = true;                  // with fuse: a LayerNorm read only by MatMuls as their A prologue (fuse_norm_prologue.h)
  bool keep_ir = false;                       // keep each pass's IR dump (for --dump-ir)
  QuantizeOptions quant;                      // weight quantisation / 4:16 sparsity (quantize.h)
  // Timing only: weights are shapes and types, never values. Folding a weight-sized node of
  // constants gives a shape-only constant (const_data.h); the program runs in timing mode only.
  bool timing_only = false;
};

CompiledModel compile(Graph g, const hw::ChipSpec& chip, const CompileOptions& options = {});

// Lowers one node into its Segment (exposed for the per-op tests).
// The node's kernel runs on its `cores` attribute's NeuronCores (1 without one).
Segment lower_node(const Graph& g, const Node& n, const hw::ChipSpec& chip, DTypePolicy policy, int64_t instructions_before = 0);

}  // namespace trnsim::compiler
