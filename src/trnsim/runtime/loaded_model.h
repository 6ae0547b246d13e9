// The runtime: a CompiledModel loaded onto a chip (its constants converted once to the fp32
// values the HBM holds), run in functional mode (real numbers) or timing mode (no data, same
// instruction streams and timing). The kernels run as one linked program (program_link.h):
// each node's streams follow the previous node's, and its leading weight loads overlap the
// previous node's work. The report attributes to each IR op the time by which it moved the
// end of the run (its critical-path share; the shares add up to the latency), its span and
// how much of it ran under earlier ops, its FLOPs and HBM bytes, and names the ops fused in.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "trnsim/compiler/compiled_model.h"
#include "trnsim/core/run.h"
#include "trnsim/hw/chip_spec.h"
#include "trnsim/runtime/program_link.h"

namespace trnsim::runtime {

struct OpTime {
  std::string node, op;
  std::vector<std::string> fused;
  double time_s = 0;        // how far this op moved the end of the run (shares sum to latency)
  uint64_t instructions = 0;
  double tensor_flops = 0;
  double hbm_bytes = 0;
  double start_s = 0, end_s = 0;  // first instruction's start, last one's end
  double overlap_s = 0;           // of [start, end), the part that ran under earlier ops
};

struct EngineUse {
  std::string engine;      // "TensorE", "VectorE", "ScalarE", "GpSimd", "DMA"
  double busy_s = 0;       // summed over cores (DMA: over queues)
  double utilisation = 0;  // busy / (time x units of that kind in use)
};

// One executed instruction on the model's timeline (kept only when asked for).
struct TimelineEvent {
  std::string op_node;
  isa::UnitId unit;
  double start_s = 0, end_s = 0;
  std::string name;  // instruction mnemonic
};

struct Report {
  std::string chip;
  std::string mode;               // "functional" | "timing"
  double time_s = 0;              // simulated latency of one forward pass
  double compile_time_s = 0;
  double sim_wall_s = 0;          // host seconds the simulation took
  std::vector<OpTime> ops;        // execution order (aliases excluded: they take no time)
  std::vector<EngineUse> engines;
  double hbm_bytes = 0;
  double tensor_flops = 0;
  uint64_t instructions = 0;
  double overlap_s = 0;           // summed over ops: time hidden under earlier ops
  uint64_t prefetched_loads = 0;  // loads released one op early (program_link.h)
  compiler::HbmPlan hbm_plan;
  std::vector<TimelineEvent> timeline;
  // Energy (core::RunResult::energy_by_unit summed over the kernels; empty: no energy model).
  std::map<std::string, double> energy_by_unit_j;
  double energy_j = 0;
  double peak_power_w = 0;
  std::vector<std::pair<double, double>> power_w;  // (start_s, watts) samples over the run
};

struct RunOutput {
  std::map<std::string, std::vector<float>> outputs;  // functional mode: graph outputs, row-major
  Report report;
};

class LoadedModel {
 public:
  // overlap=false: each kernel strictly after the previous one (no early weight loads).
  LoadedModel(const compiler::CompiledModel& model, const hw::ChipSpec& chip, bool overlap = true);
  // Inputs by graph input name, row-major fp32 (integers as their values). Missing or
  // wrongly sized inputs are a ShapeError naming the input (functional mode).
  RunOutput run(const std::map<std::string, std::vector<float>>& inputs, core::Mode mode,
                bool timeline = false) const;
  const compiler::CompiledModel& model() const { return model_; }

 private:
  const compiler::CompiledModel& model_;
  const hw::ChipSpec& chip_;
  // The constants as fp32, made at the first functional run: a timing run reads no weights.
  struct Constants {
    std::once_flag once;
    std::map<std::string, std::vector<float>> values;
  };
  std::shared_ptr<Constants> constants_ = std::make_shared<Constants>();
  const std::map<std::string, std::vector<float>>& constants() const;
  LinkedModel linked_;
  struct KernelFacts {
    uint64_t instructions = 0;
    double tensor_flops = 0, hbm_bytes = 0;
  };
  std::vector<KernelFacts> facts_;  // per kernel of linked_
};

}  // namespace trnsim::runtime
