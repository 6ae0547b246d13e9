// Whole-program scheduling: the model's kernels (one Program per IR node) linked into one
// Program, so that the next node's work can start while the current one finishes instead of
// every node paying fill, drain and DMA latency alone.
//
// Each engine's stream and each DMA queue is the kernels' streams concatenated in node order,
// with their semaphores renumbered. Across node boundaries the dependencies are exact and
// conservative: every stream of node s starts after every stream of node s-1 has finished (a
// counting barrier semaphore per node), except the loads that lead a DMA queue of node s and
// read a constant or a graph input into SBUF bytes that node s-1 never touches: those wait only
// for node s-2, so a node's weights stream in under its predecessor's compute. HBM tensors are
// shared by name (aliases resolved), a constant read at another dtype (weights cast to bf16)
// is its own HBM tensor. Functional results are those of running the kernels one by one.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trnsim/compiler/compiled_model.h"
#include "trnsim/isa/program.h"

namespace trnsim::runtime {

struct LinkedModel {
  isa::Program program;
  std::vector<size_t> kernel_segment;                 // kernel k -> CompiledModel::segments index
  // Per stream (core, engine or DMA queue): where each kernel's instructions begin.
  std::map<uint32_t, std::vector<uint32_t>> stream_starts;
  std::map<std::string, std::string> canonical;       // IR tensor -> the HBM tensor holding it
  uint64_t prefetched_loads = 0;                      // loads released one node early
  uint32_t queues = 0;                                // DMA queues per core in `program`

  uint32_t stream_key(uint16_t core, isa::Engine e, uint16_t queue) const;
  // The kernel an executed instruction belongs to.
  size_t kernel_of(uint16_t core, isa::Engine e, uint16_t queue, uint32_t index) const;
};

// prefetch=false: no early loads, every node strictly after the previous one (a caller that
// schedules the kernels itself, as the tensor-parallel runtime does).
LinkedModel link_segments(const compiler::CompiledModel& cm, bool prefetch = true);

}  // namespace trnsim::runtime
