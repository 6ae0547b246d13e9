// Whole-program scheduling: the model's kernels (one Program per IR node) linked into one
// Program, so that the next node's work can start while the current one finishes instead of
// every node paying fill, drain and DMA latency alone.
//
// Each engine's stream and each DMA queue is the kernels' streams concatenated in node order,
// with their semaphores renumbered. Across node boundaries the dependencies are per
// instruction (runtime/dependency_link.h): an instruction waits only for the earlier
// instructions whose bytes it conflicts with, so a node's weights load under the previous
// nodes' compute as far as SBUF space allows and its first tiles start as soon as the tiles
// they read are stored. HBM tensors are shared by name (aliases resolved), a constant read at
// another dtype (weights cast to bf16) is its own HBM tensor. Functional results are those of
// running the kernels one by one.
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
  uint64_t prefetched_loads = 0;                      // constant loads waiting on nothing of the previous node
  uint32_t queues = 0;                                // DMA queues per core in `program`

  uint32_t stream_key(uint16_t core, isa::Engine e, uint16_t queue) const;
  // The kernel an executed instruction belongs to.
  size_t kernel_of(uint16_t core, isa::Engine e, uint16_t queue, uint32_t index) const;
};

// prefetch=false: a barrier per node, every node strictly after the previous one (a caller
// that schedules the kernels itself, as the tensor-parallel runtime does).
LinkedModel link_segments(const compiler::CompiledModel& cm, bool prefetch = true);

}  // namespace trnsim::runtime
