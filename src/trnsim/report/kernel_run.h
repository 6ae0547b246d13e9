// Running one library kernel by name and reporting on it: the shared back end of
// `trnsim kernel` and trnsim.kernel(). Resolves the arguments, builds the program, generates
// seeded inputs (or takes the caller's), runs it, checks every output against the kernel's
// double-precision reference within its stated tolerance, summarises and writes the trace.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnsim/core/run.h"
#include "trnsim/hw/chip_spec.h"
#include "trnsim/hw/power_cap.h"
#include "trnsim/kernels/registry.h"
#include "trnsim/report/summary.h"
#include "trnsim/report/trace.h"

namespace trnsim::report {

enum class DataMode : uint8_t {
  Auto,        // functional when the data and the reference are small enough (see below)
  Functional,  // always run with data and check
  Timing,      // no data: timing only
};

// Auto runs functional up to these sizes (the reference is plain double loops).
inline constexpr int64_t kAutoMaxElements = 16 << 20;   // all tensors together
inline constexpr double kAutoMaxMatmulFlops = 4.5e9;    // e.g. a 1024^3 matmul, 2 heads x 4K attention

struct KernelRunOptions {
  std::string kernel;
  std::string chip = "trn2";                   // preset name or YAML path
  std::map<std::string, std::string> params;   // "m" -> "2048", "head_dim" or "head-dim"
  std::string dtype;                           // "" = the kernel's default
  DataMode data = DataMode::Auto;
  std::string trace_path;                      // "" = no trace
  uint64_t seed = 0;
  double clock_scale = 1;                      // DVFS operating point (hw::at_clock_scale)
  double power_cap_w = 0;                      // > 0: throttle the clocks to this chip power
  kernels::Tensors inputs;                     // caller's inputs by name; the rest are random
  std::function<void(const std::string&)> progress;  // one-line status messages
};

struct OutputCheck {
  std::string name;
  kernels::Tolerance tolerance;
  double max_abs_error = 0;
  double mean_abs_error = 0;
  double max_rel_error = 0;   // over elements whose reference is non-zero
  uint64_t violations = 0;    // elements outside abs + rel * |reference| (NaN included)
  bool ok() const { return violations == 0; }
};

struct KernelRun {
  const kernels::KernelDef* kernel = nullptr;
  kernels::KernelArgs args;
  hw::ChipSpec chip;
  isa::Program program;
  core::RunResult result;
  RunSummary summary;
  bool functional = false;
  kernels::Tensors inputs;          // as the kernel saw them (rounded to their dtypes)
  std::vector<OutputCheck> checks;  // functional runs only
  std::string trace_path;
  TraceStats trace;
  double power_cap_w = 0;           // 0: none
  hw::Throttle throttle;            // the search, when power_cap_w > 0
  bool ok() const;
  // The summary JSON (time_s at the top level) plus kernel, args, mode, checks and trace.
  nlohmann::json to_json() const;
};

KernelRun run_kernel(const KernelRunOptions& options);

// The shape of an HBM tensor of the program ("[128, 512] bf16"), for messages.
std::string tensor_description(const isa::HbmTensor& t);

}  // namespace trnsim::report
