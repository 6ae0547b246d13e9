// The linker's tracker (a kernel's accesses swept at once, an index over long regions) against
// the cell-by-cell algorithm it replaced, kept here as the reference: the same waits (stream,
// position and kernel) for every access of random kernels, staggered partition-strided tiles
// (each spanning the tensor, the quadratic case) included.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "trnsim/runtime/access_tracker.h"

namespace trnsim::runtime {
namespace {

// The tracker before the sweep and the index: each access updates every cell it meets.
class Reference {
 public:
  void conflicts(const MemAccess& a, AccessTracker::Deps& deps) const {
    auto r = regions_.find(a.region);
    if (r == regions_.end()) return;
    const Map& m = r->second;
    auto it = m.upper_bound(a.lo);
    if (it != m.begin() && std::prev(it)->second.hi > a.lo) --it;
    for (; it != m.end() && it->first < a.hi; ++it) {
      for (const Entry& e : it->second.writers) merge(deps, e.stream, {e.pos, e.kernel});
      if (a.write)
        for (const Entry& e : it->second.readers) merge(deps, e.stream, {e.pos, e.kernel});
    }
  }
  void record(const MemAccess& a, uint32_t kernel, uint32_t stream, uint32_t pos) {
    Map& m = regions_[a.region];
    split(m, a.lo);
    split(m, a.hi);
    int64_t at = a.lo;
    auto it = m.lower_bound(a.lo);
    while (at < a.hi) {
      if (it != m.end() && it->first == at) {
        at = it->second.hi;
        ++it;
        continue;
      }
      const int64_t next = (it == m.end() || it->first >= a.hi) ? a.hi : it->first;
      m.emplace_hint(it, at, Cell{next, {}, {}});
      at = next;
    }
    auto put = [&](std::vector<Entry>& v) {
      for (Entry& e : v)
        if (e.stream == stream) { e = {kernel, stream, std::max(e.pos, pos)}; return; }
      v.push_back({kernel, stream, pos});
    };
    for (auto c = m.lower_bound(a.lo); c != m.end() && c->first < a.hi; ++c) {
      Cell& cell = c->second;
      if (a.write) {
        auto older = [&](const Entry& e) { return e.kernel < kernel; };
        cell.writers.erase(std::remove_if(cell.writers.begin(), cell.writers.end(), older), cell.writers.end());
        cell.readers.erase(std::remove_if(cell.readers.begin(), cell.readers.end(), older), cell.readers.end());
        put(cell.writers);
      } else {
        put(cell.readers);
      }
    }
  }

 private:
  using Entry = AccessTracker::Entry;
  using Cell = AccessTracker::Cell;
  using Map = AccessTracker::Map;
  static void merge(AccessTracker::Deps& deps, uint32_t s, AccessTracker::Dep d) {
    auto [it, fresh] = deps.emplace(s, d);
    if (!fresh && it->second.pos < d.pos) it->second = d;
  }
  static void split(Map& m, int64_t x) {
    auto it = m.upper_bound(x);
    if (it == m.begin()) return;
    --it;
    if (it->first < x && x < it->second.hi) {
      Cell right = it->second;
      it->second.hi = x;
      m.emplace(x, std::move(right));
    }
  }
  std::map<uint64_t, Map> regions_;
};

bool same(const AccessTracker::Deps& a, const AccessTracker::Deps& b) {
  if (a.size() != b.size()) return false;
  for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j)
    if (i->first != j->first || i->second.pos != j->second.pos || i->second.kernel != j->second.kernel) return false;
  return true;
}

// A random access: a small range, a partition-strided tile spanning most of the region, or
// the whole region.
MemAccess random_access(std::mt19937_64& rng, int64_t size) {
  MemAccess a;
  a.region = rng() % 3;
  a.write = rng() % 2;
  const int kind = static_cast<int>(rng() % 3);
  const int64_t w = 1 + static_cast<int64_t>(rng() % 16);
  const int64_t at = static_cast<int64_t>(rng() % static_cast<uint64_t>(size));
  if (kind == 0) {
    a.lo = at;
    a.hi = at + w;
  } else if (kind == 1) {  // column tile of 8 partitions of stride size / 8
    a.lo = at % (size / 8);
    a.hi = a.lo + 7 * (size / 8) + w;
  } else {
    a.lo = 0;
    a.hi = size;
  }
  return a;
}

// Runs `kernels` random kernels through both trackers; returns the accesses compared.
int compare(uint64_t seed, int kernels, int per_kernel, int64_t size) {
  std::mt19937_64 rng(seed);
  AccessTracker tracker;
  Reference ref;
  std::vector<uint32_t> next_pos(6, 0);
  int compared = 0;
  for (uint32_t k = 0; k < static_cast<uint32_t>(kernels); ++k) {
    std::vector<AccessTracker::Record> records;
    for (int i = 0; i < per_kernel; ++i) {
      const uint32_t stream = static_cast<uint32_t>(rng() % next_pos.size());
      const uint32_t pos = next_pos[stream]++;
      const int n = 1 + static_cast<int>(rng() % 2);  // one instruction, one or two accesses
      for (int j = 0; j < n; ++j) {
        const MemAccess a = random_access(rng, size);
        AccessTracker::Deps got, want;
        tracker.conflicts(a, got);
        ref.conflicts(a, want);
        EXPECT_TRUE(same(got, want)) << "seed " << seed << " kernel " << k << " access " << i;
        if (!same(got, want)) return -1;
        ++compared;
        records.push_back({a, stream, pos});
      }
      next_pos[stream] += static_cast<uint32_t>(rng() % 3);  // other kernels' instructions between
    }
    for (const auto& r : records) ref.record(r.access, k, r.stream, r.pos);
    tracker.record(records, k);
  }
  return compared;
}

TEST(AccessTracker, SameWaitsAsTheCellByCellAlgorithmOnRandomKernels) {
  int compared = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) compared += compare(seed, 12, 40, 256);
  EXPECT_GT(compared, 40 * 12 * 40);
}

TEST(AccessTracker, SameWaitsOnLongKernelsThatBuildTheIndex) {
  // 400 accesses a kernel over a region of 4096 bytes: hundreds of cells, queries that span
  // them, so the index is built and used.
  for (uint64_t seed = 100; seed < 104; ++seed) EXPECT_GT(compare(seed, 6, 400, 4096), 0);
}

TEST(AccessTracker, StaggeredTilesOfOneTensorAreNotQuadratic) {
  // 2 x 20,000 column tiles of one tensor (each spanning it): a write kernel, a read kernel.
  // Cell by cell this is 4 x 10^8 cell visits; swept and indexed, well under a second.
  AccessTracker t;
  const int64_t tiles = 20000, part = 4 * tiles;
  auto tile = [&](int64_t i, bool write) { return MemAccess{7, 4 * i, 127 * part + 4 * (i + 1), write}; };
  std::vector<AccessTracker::Record> writes;
  for (int64_t i = 0; i < tiles; ++i) writes.push_back({tile(i, true), static_cast<uint32_t>(i % 4), static_cast<uint32_t>(i)});
  t.record(writes, 0);
  std::vector<AccessTracker::Record> reads;
  for (int64_t i = 0; i < tiles; ++i) {
    AccessTracker::Deps d;
    t.conflicts(tile(i, false), d);
    ASSERT_EQ(d.size(), 4u);  // every tile's box meets the last tile of each of the 4 queues
    for (const auto& [s, dep] : d) EXPECT_EQ(dep.pos, static_cast<uint32_t>(tiles - 4 + s));
    reads.push_back({tile(i, false), 4, static_cast<uint32_t>(tiles + i)});
  }
  t.record(reads, 1);
  AccessTracker::Deps d;
  t.conflicts(tile(0, true), d);
  EXPECT_EQ(d.at(4).pos, static_cast<uint32_t>(2 * tiles - 1));
}

}  // namespace
}  // namespace trnsim::runtime
