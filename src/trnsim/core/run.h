// Running a Program on a simulated chip. One entry point for both execution modes:
//   functional — memories hold real bytes in each tile's dtype, engines compute in fp32,
//                outputs come back decoded to fp32; timing as in timing mode;
//   timing     — the same instruction streams and the same timing, no data (for big runs).
// The result carries the total time, per-unit statistics and (optionally) one compact record
// per executed instruction, which the profiler turns into a trace.
#pragma once
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "trnsim/hw/chip_spec.h"
#include "trnsim/isa/program.h"
#include "trnsim/sim/time.h"

namespace trnsim::core {

enum class Mode : uint8_t { Functional, Timing };

struct RunOptions {
  Mode mode = Mode::Functional;
  bool record_instructions = true;   // keep one InstructionRecord per executed instruction
  bool validate = true;              // isa::validate the program first
};

// One executed instruction: which stream, which instruction of it, when. Look the instruction
// itself up with RunResult::instruction(program, record).
struct InstructionRecord {
  int64_t start_ps = 0;
  int64_t end_ps = 0;
  uint32_t index = 0;      // position in its stream
  uint16_t core = 0;
  isa::Engine engine = isa::Engine::Tensor;
  uint16_t queue = 0;      // DMA queue (engine == Dma)
};

struct UnitStats {
  isa::UnitId unit;
  int64_t busy_ps = 0;          // time executing (DMA: from issue to completion)
  uint64_t instructions = 0;
  double flops = 0;             // isa::op_flops summed (TensorE: multiply-adds x2)
  int64_t bytes = 0;            // isa::op_bytes summed
  double energy_j = 0;          // dynamic energy, SBUF/PSUM accesses included (energy_model.h)
};

// Energy of a run: the units' dynamic energy, HBM's, and the chip's static power over the run.
// total_j = static_j + hbm_j + the sum of UnitStats::energy_j.
struct EnergyReport {
  bool modelled = false;        // the chip spec has an energy block
  double total_j = 0;
  double static_j = 0;
  double static_w = 0;          // at the operating point run
  double hbm_j = 0;
  double peak_w = 0;            // static + the highest dynamic power of any timeline bin
  int64_t bin_ps = 0;           // timeline bin width
  std::vector<double> bins_j;   // dynamic energy (units + HBM) per bin
  double average_w(sim::Time total) const { return total.ps() > 0 ? total_j / (total.ps() * 1e-12) : 0.0; }
};

struct RunResult {
  sim::Time total;                                    // completion of the last instruction
  std::map<std::string, std::vector<float>> outputs;  // functional mode: every Output tensor
  std::vector<UnitStats> units;                       // one per engine and DMA queue used
  std::vector<InstructionRecord> records;             // in completion order
  uint64_t instructions = 0;
  uint64_t events = 0;                                // discrete events processed
  double hbm_bytes = 0;                               // bytes through HBM (all cores)
  double tensor_flops = 0;                            // TensorE FLOPs (all cores)
  EnergyReport energy;

  double total_ms() const { return total.ms(); }
  const UnitStats* unit(uint16_t core, isa::Engine e, uint16_t queue = 0) const;
  // Energy by unit kind: "TensorE", "VectorE", "ScalarE", "GpSimd", "DMA", "HBM", "static";
  // the values sum to energy.total_j. Empty when the chip has no energy model.
  std::map<std::string, double> energy_by_unit() const;
  // (start, watts) of each power-timeline bin: static power plus the bin's dynamic energy.
  std::vector<std::pair<sim::Time, double>> power_samples() const;
  static const isa::Instruction& instruction(const isa::Program& p, const InstructionRecord& r);
};

// Inputs are fp32 values, one per element of each Input tensor (row-major), rounded to the
// tensor's dtype on the way in; missing inputs are an Error in functional mode, ignored in
// timing mode. Throws ShapeError/UnsupportedError for invalid programs and Error naming the
// waiting engines when the semaphores deadlock.
RunResult run(const isa::Program& program, const hw::ChipSpec& chip,
              const std::map<std::string, std::vector<float>>& inputs = {},
              const RunOptions& options = {});

// The same with the inputs as views of caller-owned values: a runtime that runs one kernel
// per op passes its tensors without copying them.
using InputViews = std::map<std::string, std::span<const float>>;
RunResult run_views(const isa::Program& program, const hw::ChipSpec& chip, const InputViews& inputs,
                    const RunOptions& options = {});

}  // namespace trnsim::core
