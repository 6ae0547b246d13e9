// A max-per-stream index over a region's cells (runtime/access_tracker.h), for the regions
// whose conflict scans grew long: a bottom-up segment tree whose nodes hold, per stream, the
// latest writer and the latest writer-or-reader of their cells, so a query over k cells costs
// O(log k) nodes instead of k cells. Built from a snapshot; the tracker drops it on change.
#pragma once
#include <cstdint>
#include <vector>

#include "trnsim/runtime/access_tracker.h"

namespace trnsim::runtime {

class CellIndex {
 public:
  explicit CellIndex(const AccessTracker::Map& cells);
  // What a scan of the cells meeting [lo, hi) adds to `deps`.
  void conflicts(int64_t lo, int64_t hi, bool write, AccessTracker::Deps& deps) const;

 private:
  struct Span {
    uint32_t off = 0, count = 0;  // into entries_
  };
  Span append_merged(Span a, Span b);
  size_t n_ = 0;
  std::vector<int64_t> lo_, hi_;              // the cells, in order
  std::vector<Span> writers_, all_;           // per node (1-based, leaves at n_ + i)
  std::vector<AccessTracker::Entry> entries_;  // each span sorted by stream, one per stream
};

}  // namespace trnsim::runtime
