// The dependency tracker's per-buffer record lists, indexed so that a new access meets only
// the records that may share a byte with it.
//
// Each buffer keeps its writers and readers in append order (the order the tracker reports
// waits in). A plain list made every new access test every earlier one: quadratic on programs
// of 10^5+ DMA tiles over one huge tensor. Two indexes find a superset of the records an
// access can meet, returned in append order, so the tracker's exact test then finds exactly
// the waits the full scan found (tests/cpp/kernels/access_index_test.cpp):
// - by byte range: the records whose closed range meets [x0, x1] have, among lengths <= 2^k,
//   a first byte in [x0 - 2^k, x1] (one ordered map per power-of-two length class);
// - by phase: a record whose outermost dim (stride P) holds blocks narrower than P lies in the
//   residues [base mod P, + block) mod P; records of one P are keyed by residue the same way.
//   Partition-strided tiles of one tensor (each spanning the whole tensor, disjoint bytes)
//   then meet only the tiles of their own columns.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "trnsim/kernels/access_overlap.h"

namespace trnsim::kernels {

// A (partition range x byte range) box: partitions [p0, p1), bytes [b0, b1).
struct Box {
  int p0 = 0, p1 = 0;
  int64_t b0 = 0, b1 = 0;
  bool overlaps(const Box& o) const { return p0 < o.p1 && o.p0 < p1 && b0 < o.b1 && o.b0 < b1; }
  bool covers(const Box& o) const { return p0 <= o.p0 && o.p1 <= p1 && b0 <= o.b0 && o.b1 <= b1; }
};

// One recorded access: its box, exact byte set, and the stream and index of its instruction.
struct Access {
  Box box;
  ByteSet set;  // within a partition (SBUF/PSUM) or the tensor (HBM)
  uint32_t stream = 0;
  uint32_t index = 0;
};

// Closed intervals [start, start + len] keyed by start, one ordered map per length class.
class IntervalIndex {
 public:
  void insert(int64_t start, int64_t len, uint64_t seq);
  void erase(int64_t start, int64_t len, uint64_t seq);
  // Appends the seqs of intervals meeting [lo, hi] (and perhaps a few more).
  void query(int64_t lo, int64_t hi, std::vector<uint64_t>& out) const;
  void all(std::vector<uint64_t>& out) const;
  bool empty() const { return used_ == 0; }
  void clear();

 private:
  static constexpr int kClasses = 64;
  static int length_class(int64_t len);
  std::array<std::map<std::pair<int64_t, uint64_t>, int64_t>, kClasses> by_start_;  // -> end
  uint64_t used_ = 0;  // bit k: class k may be non-empty
};

class AccessList {
 public:
  void push(const Access& a);
  // Records that may share a byte with an access of box q and set s, in append order.
  std::vector<Access*> near(const Box& q, const ByteSet& s);
  // Removes the records among near(q, s) for which pred is true.
  template <class Pred>
  void erase_near(const Box& q, const ByteSet& s, Pred&& pred) {
    std::vector<size_t> gone;
    for (size_t at : positions_near(q, s)) if (pred(recs_[at])) gone.push_back(at);
    if (!gone.empty()) erase(gone);
  }
  // The last `n` records, latest first.
  std::vector<Access*> latest(size_t n);
  // Appends every record of `o` (in its order).
  void append(const AccessList& o);
  void clear();
  size_t size() const { return recs_.size(); }

 private:
  // Short lists (most SBUF tiles) are scanned whole; the indexes are built past this size.
  static constexpr size_t kIndexFrom = 24;
  std::vector<size_t> positions_near(const Box& q, const ByteSet& s) const;  // ascending
  void erase(const std::vector<size_t>& positions);  // ascending
  void index(uint64_t seq, const Access& a);
  void unindex(uint64_t seq, const Access& a);
  bool indexed_ = false;
  uint64_t next_ = 0;
  std::vector<Access> recs_;    // append order
  std::vector<uint64_t> seqs_;  // recs_[i]'s sequence number (ascending)
  // Records with a phase, per period: grouped by their residue window [residue, residue +
  // width], each group keyed by address (box). Both narrow: stripes of one tile share a box and
  // differ in residue; the blocks of a long strided stream share a residue and differ in box
  // (keyed by residue alone, `kernel transpose --cols 2^22` spent 521 s in this index).
  struct PhaseGroups {
    int64_t max_width = 0;
    std::map<std::pair<int64_t, int64_t>, IntervalIndex> groups;  // (residue, width) -> by address
  };
  IntervalIndex by_range_;                    // records without a phase
  std::map<int64_t, PhaseGroups> by_phase_;   // period -> its groups
};

}  // namespace trnsim::kernels
