// The run as a Chrome trace-event / Perfetto JSON file (open it at ui.perfetto.dev).
//
// Layout: one process per core ("core0", pid 1 + core) with one thread per compute engine and
// per DMA queue ("core0 TensorE", "core0 dma3"); one complete event ("ph":"X") per executed
// instruction, ts/dur in microseconds with picosecond decimals; args carry what a
// neuron-profile JSON carries per instruction (opcode, engine, timestamp, duration) plus the
// operands (isa::describe), dtype, bytes, FLOPs and HBM bytes. A "chip" process (pid 0) holds
// a counter track of HBM bandwidth over time and one of the chip's power (W). otherData carries the run's summary facts
// (total_time_s, event_count, chip, program).
//
// A queue whose transfers overlap in time (a DMA queue may keep several in flight) gets extra
// threads ("core0 dma3 +1") so that every track stays properly nested, as the format requires.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>

#include "trnsim/core/run.h"
#include "trnsim/hw/chip_spec.h"
#include "trnsim/isa/program.h"

namespace trnsim::report {

struct TraceOptions {
  int bandwidth_bins = 256;     // samples of the HBM bandwidth counter (0: no counter track)
  bool operands = true;         // isa::describe per event (the bulk of the file)
};

struct TraceStats {
  uint64_t events = 0;          // instruction events written
  uint64_t bytes = 0;           // size of the JSON text
};

// Needs a RunResult recorded with RunOptions::record_instructions (else only metadata).
TraceStats write_trace(std::ostream& out, const isa::Program& program, const core::RunResult& result,
                       const hw::ChipSpec& chip, const TraceOptions& options = {});

// Writes to `path`, creating its parent directories; throws Error naming the path on failure.
TraceStats write_trace_file(const std::string& path, const isa::Program& program,
                            const core::RunResult& result, const hw::ChipSpec& chip,
                            const TraceOptions& options = {});

}  // namespace trnsim::report
