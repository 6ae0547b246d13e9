// The tracker's indexed record lists against a brute-force reference: on random sequences of
// pushes, wait queries, covering-write erasures and latest-record lookups over random strided
// HBM and SBUF patterns, the indexed list must find exactly the records a full scan finds, in
// the same (append) order.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "trnsim/kernels/access_index.h"

using namespace trnsim;
using namespace trnsim::kernels;

namespace {

struct Use {
  Box box;
  ByteSet set;
};

// A random pattern: mostly partition-strided tiles of a row-major tensor (the case the phase
// index serves), some contiguous or interleaved ones, with random offsets and dims.
Use random_use(std::mt19937_64& rng, bool hbm) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  isa::AccessPattern ap;
  ap.space = hbm ? isa::Space::HBM : isa::Space::SBUF;
  ap.dtype = numerics::DType::F32;
  const int64_t row = 64 * pick(1, 4);  // elements per tensor row
  ap.partitions = static_cast<uint16_t>(pick(1, 8));
  ap.start_partition = hbm ? 0 : static_cast<uint8_t>(pick(0, 4));
  ap.partition_stride = hbm ? row : 0;
  ap.ndims = static_cast<uint8_t>(pick(1, 2));
  const int64_t cols = pick(1, 3) * 8;
  ap.dims[0] = {pick(0, 5) == 0 ? 2 : 1, static_cast<int32_t>(cols)};  // sometimes every other element
  if (ap.ndims == 2) ap.dims[1] = {static_cast<int32_t>(pick(1, 3)), static_cast<int32_t>(pick(1, 4))};
  ap.offset = 4 * (pick(0, 7) * cols + pick(0, 3) * row * 8);
  Use u;
  auto [lo, hi] = ap.byte_extent();
  u.box = hbm ? Box{0, 1, lo, hi} : Box{ap.start_partition, ap.start_partition + ap.partitions, lo, hi};
  u.set = byte_set(ap);
  return u;
}

bool conflict(const Access& a, const Use& u) {
  return a.box.overlaps(u.box) && bytes_intersect(a.set, u.set).value_or(true);
}
bool covered(const Access& a, const Use& u) { return u.box.covers(a.box) && bytes_cover(u.set, a.set); }

void run_sequence(uint64_t seed, bool hbm) {
  std::mt19937_64 rng(seed);
  AccessList fast;
  std::vector<Access> ref;  // the tracker's former plain list
  for (uint32_t step = 0; step < 600; ++step) {
    const Use u = random_use(rng, hbm);
    // Waits: the records that conflict, in append order.
    std::vector<std::pair<uint32_t, uint32_t>> want, got;
    for (auto& a : ref) if (conflict(a, u)) want.push_back({a.stream, a.index});
    for (Access* a : fast.near(u.box, u.set)) if (conflict(*a, u)) got.push_back({a->stream, a->index});
    ASSERT_EQ(got, want) << "seed " << seed << " step " << step;
    const auto kind = rng() % 4;
    const Access rec{u.box, u.set, static_cast<uint32_t>(rng() % 6), step};
    if (kind == 0) {  // a write: drop what it covers, then record it
      std::erase_if(ref, [&](const Access& a) { return covered(a, u); });
      fast.erase_near(u.box, u.set, [&](const Access& a) { return covered(a, u); });
    }
    if (kind == 1 && !ref.empty()) {  // the reader merge: the latest records, newest first
      auto l = fast.latest(4);
      ASSERT_EQ(l.size(), std::min<size_t>(4, ref.size()));
      for (size_t k = 0; k < l.size(); ++k) ASSERT_EQ(l[k]->index, ref[ref.size() - 1 - k].index);
      l[0]->index = step;
      ref.back().index = step;
      continue;
    }
    ref.push_back(rec);
    fast.push(rec);
    ASSERT_EQ(fast.size(), ref.size());
  }
}

TEST(AccessIndex, FindsExactlyTheFullScansRecordsHbm) {
  for (uint64_t seed = 1; seed <= 12; ++seed) run_sequence(seed, true);
}

TEST(AccessIndex, FindsExactlyTheFullScansRecordsSbuf) {
  for (uint64_t seed = 101; seed <= 106; ++seed) run_sequence(seed, false);
}

TEST(AccessIndex, AppendKeepsOrder) {
  std::mt19937_64 rng(7);
  AccessList a, b;
  for (uint32_t i = 0; i < 20; ++i) {
    Use u = random_use(rng, true);
    (i < 10 ? a : b).push({u.box, u.set, 0, i});
  }
  b.append(a);
  auto l = b.latest(20);
  ASSERT_EQ(l.size(), 20u);
  for (uint32_t k = 0; k < 10; ++k) EXPECT_EQ(l[k]->index, 9 - k);  // a's records, appended last
  for (uint32_t k = 10; k < 20; ++k) EXPECT_EQ(l[k]->index, 29 - k);
}

}  // namespace
