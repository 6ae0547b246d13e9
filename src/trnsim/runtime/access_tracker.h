// Cross-kernel dependencies of a linked program (runtime/program_link.h): which earlier
// instructions, by stream and position, an instruction must wait for, from the bytes it reads
// and writes. Per memory region (an HBM tensor, one core's SBUF, one core's PSUM) an interval
// map holds, per byte range, the last writers and the readers since, at most one entry per
// stream (the latest position: a stream runs in order). A write by kernel k replaces the
// entries of earlier kernels (it waited for them, so later waiters on it are ordered after
// them too). Ranges are byte bounding boxes within a partition (all partitions alike):
// conservative, never missing a conflict.
//
// Cost: partition-strided tiles of one huge tensor each span the whole tensor, so each tile
// met every cell (quadratic). A kernel's accesses are therefore applied as one sweep over
// their sorted boundaries, and a region whose scans grow long gets a max-per-stream index
// over its cells (runtime/access_cell_index.h); the waits are those of the cell-by-cell
// algorithm (tests/cpp/runtime/access_tracker_test.cpp checks them against it).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
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

class CellIndex;

class AccessTracker {
 public:
  struct Dep {
    uint32_t pos = 0;     // latest conflicting position in the stream
    uint32_t kernel = 0;  // its kernel
  };
  using Deps = std::map<uint32_t, Dep>;  // stream -> latest conflicting instruction
  struct Record {
    MemAccess access;
    uint32_t stream = 0, pos = 0;  // positions grow within a stream
  };
  struct Entry {
    uint32_t kernel, stream, pos;
  };
  struct Cell {
    int64_t hi = 0;
    std::vector<Entry> writers, readers;
  };
  using Map = std::map<int64_t, Cell>;  // disjoint [lo, hi) ranges by lo

  AccessTracker();
  ~AccessTracker();
  AccessTracker(AccessTracker&&) noexcept;
  AccessTracker& operator=(AccessTracker&&) noexcept;

  // Adds to `deps` every recorded access `a` conflicts with (read-write, write-anything).
  void conflicts(const MemAccess& a, Deps& deps) const;
  // Records the accesses of kernel `kernel`; kernels are recorded in order.
  void record(const std::vector<Record>& records, uint32_t kernel);

 private:
  struct Region {
    Map cells;
    mutable std::unique_ptr<CellIndex> index;  // built once scans grow long; dropped on change
    mutable int64_t scanned = 0;               // cells visited by scans since the last change
    Region();
    ~Region();
    Region(Region&&) noexcept;
  };
  static void apply(Region& r, const std::vector<const Record*>& records, uint32_t kernel);
  std::map<uint64_t, Region> regions_;
};

}  // namespace trnsim::runtime
