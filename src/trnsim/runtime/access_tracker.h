// Cross-kernel dependencies of a linked program (runtime/program_link.h): which earlier
// instructions, by stream and position, an instruction must wait for, from the bytes it reads
// and writes. Per memory region (an HBM tensor, one core's SBUF, one core's PSUM) an interval
// map holds, per byte range, the last writers and the readers since, at most one entry per
// stream (the latest position: a stream runs in order). A write by kernel k replaces the
// entries of earlier kernels (it waited for them, so later waiters on it are ordered after
// them too). Ranges are byte bounding boxes within a partition (all partitions alike):
// conservative, never missing a conflict.
#pragma once
#include <cstdint>
#include <map>
#include <vector>

#include "trnsim/isa/instruction.h"
#include "trnsim/isa/program.h"

namespace trnsim::runtime {

struct MemAccess {
  uint64_t region = 0;  // space and tensor or core (region_of)
  int64_t lo = 0, hi = 0;
  bool write = false;
};

// The accesses of one instruction of `core` (HBM tensors already renumbered into `tensors`).
// Reads of Input tensors (constants, graph inputs: never written) are left out.
std::vector<MemAccess> accesses_of(const isa::Op& op, uint16_t core, const std::vector<isa::HbmTensor>& tensors);

class AccessTracker {
 public:
  struct Dep {
    uint32_t pos = 0;     // latest conflicting position in the stream
    uint32_t kernel = 0;  // its kernel
  };
  using Deps = std::map<uint32_t, Dep>;  // stream -> latest conflicting instruction

  // Adds to `deps` every recorded access `a` conflicts with (read-write, write-anything).
  void conflicts(const MemAccess& a, Deps& deps) const;
  // Records an access of kernel `kernel` at (stream, pos); kernels are recorded in order.
  void record(const MemAccess& a, uint32_t kernel, uint32_t stream, uint32_t pos);

 private:
  struct Entry {
    uint32_t kernel, stream, pos;
  };
  struct Cell {
    int64_t hi = 0;
    std::vector<Entry> writers, readers;
  };
  using Map = std::map<int64_t, Cell>;  // disjoint [lo, hi) ranges by lo
  static void split(Map& m, int64_t x);
  std::map<uint64_t, Map> regions_;
};

}  // namespace trnsim::runtime
