// The compiler's product: one kernel Program per IR node that does work (so each
// instruction is attributed to the op that emitted it), the aliases that cost nothing
// (Reshape: the same bytes under a new name), the constants the Programs read, the final IR
// and the record of the passes.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "trnsim/compiler/ir.h"
#include "trnsim/isa/program.h"

namespace trnsim::compiler {

enum class DTypePolicy : uint8_t { FP32, BF16, FP8 };
DTypePolicy parse_policy(const std::string& s);   // "fp32" | "bf16" | "fp8"; UnsupportedError otherwise
std::string_view policy_name(DTypePolicy p);

struct Segment {
  enum class Kind : uint8_t { Kernel, Alias } kind = Kind::Kernel;
  std::string node;                  // IR node name
  std::string op;                    // op name ("MatMul")
  std::vector<std::string> fused;    // names of nodes fused into this one
  isa::Program program;              // Kernel
  std::vector<std::string> reads;    // IR tensors the program reads (its Input tensors)
  std::vector<std::string> writes;   // IR tensors it writes (its Output tensors)
  std::string alias_of;              // Alias: writes[0] is reads[0] reshaped
  int64_t sbuf_peak_bytes = 0;       // Kernel: highest SBUF byte per partition of its own tiles (not saved)
};

struct PassRecord {
  std::string name;
  double seconds = 0;
  std::string ir;   // dump after the pass (kept only when asked for)
};

// HBM planning: each intermediate tensor is live from its producer to its last reader.
struct HbmPlan {
  int64_t weight_bytes = 0;        // constants
  int64_t io_bytes = 0;            // graph inputs and outputs
  int64_t peak_activation_bytes = 0;
  int64_t capacity_bytes = 0;      // the chip's HBM
};

struct CompiledModel {
  std::string chip;
  DTypePolicy policy = DTypePolicy::FP32;
  Graph graph;                          // after the last pass
  std::vector<Segment> segments;        // in execution order
  std::vector<PassRecord> passes;
  HbmPlan hbm;
  double compile_time_s = 0;
  std::vector<std::string> inputs, outputs;
  std::map<std::string, Shape> shapes;  // inputs and outputs
  std::string dump_ir() const;          // every pass by name with the IR after it
};

}  // namespace trnsim::compiler
