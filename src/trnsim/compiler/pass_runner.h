// The one pass runner: every pass of the compiler is registered here by name and run through
// run_passes, which checks the IR after it (check(), naming the pass), times it and keeps its
// IR dump for --dump-ir. The compile pipeline, the tensor-parallel preparation and the
// per-shard passes of the tensor-parallel split are lists of these names.
//   bind-inputs, shape-inference, constant-folding (+ dead code), decomposition,
//   attention-fusion, gelu-fusion, fusion, elementwise-fusion, dead-code, core-split, operand-storage, sbuf-placement, sbuf-residency,
//   memory-planning, lowering
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "trnsim/compiler/compile.h"

namespace trnsim::compiler {

// What the passes work on. memory-planning and lowering need the chip and fill `model`.
struct PassState {
  Graph& g;
  const CompileOptions& opt;
  const hw::ChipSpec* chip = nullptr;
  CompiledModel* model = nullptr;
  int cores = 1;                       // NeuronCores for core-split
  std::vector<std::string> defaulted;  // bind-inputs: symbolic axes set to 1 (error hints)
  std::map<size_t, Segment> lowered;   // sbuf-residency: kernels lowered ahead that residency leaves as they are
};

struct Pass {
  std::string_view name;
  bool shapes_required;  // check() after it requires every shape known
  void (*run)(PassState&);
};

const std::vector<Pass>& compiler_passes();

// Runs the named passes in order; records each (name, wall time, IR dump when opt.keep_ir)
// into `records` when given. An unknown name is a programming error (Error).
void run_passes(PassState& s, const std::vector<std::string_view>& names, std::vector<PassRecord>* records = nullptr);

// The front of every pipeline: bind-inputs, shape-inference, constant-folding, decomposition,
// constant-folding.
const std::vector<std::string_view>& front_passes();

}  // namespace trnsim::compiler
