// The summary of one run, the numbers a performance engineer reads first: how long, how busy
// each engine was, how close TensorE came to its peak, how much HBM traffic at what bandwidth,
// and which side of the roofline the program sits. Built from a RunResult and its Program;
// printed as JSON (unit-suffixed keys) or as a table.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnsim/core/run.h"
#include "trnsim/hw/chip_spec.h"
#include "trnsim/isa/program.h"

namespace trnsim::report {

struct UnitUtilisation {
  std::string unit;          // "core0.TensorE", "core0.dma3"
  uint16_t core = 0;
  isa::Engine engine = isa::Engine::Tensor;
  uint16_t queue = 0;
  double busy_s = 0;
  double utilisation = 0;    // busy / total time
  uint64_t instructions = 0;
  double flops = 0;
  int64_t bytes = 0;
  double energy_j = 0;       // dynamic, with the unit's SBUF/PSUM accesses
};

// Energy and power of the run (core::EnergyReport), by unit kind across cores.
struct EnergySummary {
  bool modelled = false;
  double energy_j = 0;
  double average_power_w = 0;
  double peak_power_w = 0;
  // "TensorE", "VectorE", "ScalarE", "GpSimd", "DMA", "HBM", "static": sums to energy_j.
  std::map<std::string, double> by_unit_j;
};

// The energy fields every result kind carries: energy_j, average_power_w, peak_power_w,
// energy_by_unit_j (null when the chip has no energy model).
void add_energy_json(nlohmann::json& j, const EnergySummary& e);


struct RunSummary {
  std::string program;
  std::string chip;
  int cores_used = 0;               // cores with at least one instruction
  double time_s = 0;
  uint64_t instructions = 0;
  uint64_t events = 0;

  std::vector<UnitUtilisation> units;  // every engine and DMA queue the program uses
  // Fraction of the time at least one DMA queue of a core was busy, per core (from the
  // instruction records; the per-queue figures above do not say how queues overlap). Empty
  // when the run kept no records.
  std::vector<double> dma_active;

  // TensorE
  numerics::DType matmul_dtype = numerics::DType::BF16;  // dtype carrying most matmul FLOPs
  bool has_matmul = false;
  double tensor_flops = 0;          // matmul FLOPs (2 K M N each); transposes excluded
  double tflops = 0;                // achieved: tensor_flops / time
  double peak_tflops = 0;           // clock-derived, for the cores used and matmul_dtype
  double peak_fraction = 0;         // tflops / peak_tflops

  // HBM
  double hbm_bytes = 0;
  double bandwidth_gbps = 0;        // achieved: hbm_bytes / time
  double hbm_bandwidth_gbps = 0;    // the chip's HBM bandwidth
  double dma_bandwidth_gbps = 0;    // peak DMA bandwidth of the cores used
  double bandwidth_fraction = 0;    // achieved / min(HBM, DMA peak)

  // Roofline: TensorE FLOP per HBM byte against the chip's knee (ChipSpec::roofline_knee:
  // published peak over HBM bandwidth; ~216 for trn1 bf16, NKI quotes 222 for NeuronCore-v2).
  double arithmetic_intensity = 0;  // flop_per_byte
  double roofline_knee = 0;         // flop_per_byte
  std::string bound;                // "compute" or "memory" (by intensity vs knee); "" if no matmul

  std::map<std::string, uint64_t> opcode_counts;  // "matmul" -> n (whole program)
  std::map<std::string, uint64_t> engine_counts;  // "TensorE" -> n

  EnergySummary energy;
};

EnergySummary summarize_energy(const core::RunResult& result);
RunSummary summarize(const isa::Program& program, const core::RunResult& result,
                     const hw::ChipSpec& chip);

// JSON with unit-suffixed keys (time_s, tflops, bandwidth_gbps, hbm_bytes, ...); time_s at the
// top level.
nlohmann::json to_json(const RunSummary& s);

// A readable multi-line table for a terminal.
std::string format_table(const RunSummary& s);

}  // namespace trnsim::report
