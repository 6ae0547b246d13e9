// Per-instruction dependencies between the kernels of a linked program, instead of a barrier
// per node: an instruction of node s waits only for the earlier instructions (of any earlier
// node) whose bytes it reads after they write, or writes while they read or write them
// (runtime/access_tracker.h). So the next node's weight loads run under the current node's
// compute as far as SBUF space allows, and its first tiles start when the current node has
// stored the tiles they read, not when the whole node has drained (as Neuron's compiler
// schedules a whole graph as one program with per-tile semaphores).
//
// Mechanism: a wait on "instruction i of stream X done" is a wait on X's progress semaphore
// (one per stream, signalled by the instructions other streams wait on, in stream order, so its
// count names the instruction). An instruction that already signals a kernel semaphore gets a
// Nop after it that signals the progress semaphore. Waits beyond an instruction's four go on
// Nops before it.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "trnsim/runtime/access_tracker.h"
#include "trnsim/runtime/program_link.h"

namespace trnsim::runtime {

class DependencyLinker {
 public:
  explicit DependencyLinker(LinkedModel& lm) : lm_(lm) {}
  // Appends kernel `kernel`'s stream `src` (HBM tensors and semaphores already renumbered into
  // the linked program) to the stream `key` of core `core`, with waits on earlier kernels.
  void append(std::vector<isa::Instruction>& dst, const std::vector<isa::Instruction>& src, uint16_t core, uint32_t key,
              uint32_t kernel);
  // Records the kernel's accesses (after all its streams: they all wait on the state before it).
  void end_kernel();
  // Progress semaphores, their signals and the waits on them; fixes stream_starts.
  void finish();

 private:
  static constexpr uint32_t kPlaceholder = 1u << 30;  // wait placeholder: kPlaceholder + stream, value = position
  std::vector<isa::Instruction>& stream(uint32_t key);
  LinkedModel& lm_;
  AccessTracker tracker_;
  std::vector<AccessTracker::Record> pending_;  // this kernel's accesses
  uint32_t pending_kernel_ = 0;
  std::map<uint32_t, std::map<uint32_t, uint32_t>> waited_;  // stream -> (source stream -> latest position waited for)
  std::map<uint32_t, std::set<uint32_t>> sources_;           // stream -> positions other streams wait on
};

}  // namespace trnsim::runtime
