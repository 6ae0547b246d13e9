// Indexes of a buffer's access records (see access_index.h).
#include "trnsim/kernels/access_index.h"

#include <algorithm>
#include <bit>
#include <limits>

namespace trnsim::kernels {

namespace {
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
// bytes_intersect's run budget: below it, a nested record's test is exact, so records the
// phase index rules out are exactly those the exact test rules out.
constexpr int64_t kExactRuns = 4096;

int64_t floor_mod(int64_t a, int64_t p) {
  int64_t r = a % p;
  return r < 0 ? r + p : r;
}

// A record's phase: period P and the residue window [r, r + width) mod P holding its bytes.
struct Phase {
  int64_t period = 0, residue = 0, width = 0;
};
bool phase_of(const ByteSet& s, Phase& ph) {
  if (s.empty || s.n < 1 || !s.nested || s.stride[0] <= 0 || s.extent[0] >= s.stride[0]) return false;
  ph = {s.stride[0], floor_mod(s.base, s.stride[0]), s.extent[0]};
  return true;
}
}  // namespace

// ---- IntervalIndex -------------------------------------------------------------------------

// Smallest k with len <= 2^k (empty and one-byte intervals: class 0).
int IntervalIndex::length_class(int64_t len) {
  if (len <= 1) return 0;
  return std::min(kClasses - 1, 64 - std::countl_zero(static_cast<uint64_t>(len - 1)));
}

void IntervalIndex::insert(int64_t start, int64_t len, uint64_t seq) {
  const int k = length_class(len);
  by_start_[k].emplace(std::make_pair(start, seq), start + std::max<int64_t>(len, 0));
  used_ |= uint64_t{1} << k;
}

void IntervalIndex::erase(int64_t start, int64_t len, uint64_t seq) {
  by_start_[length_class(len)].erase({start, seq});
}

void IntervalIndex::query(int64_t lo, int64_t hi, std::vector<uint64_t>& out) const {
  for (int k = 0; k < kClasses; ++k) {
    if (!(used_ >> k & 1)) continue;
    // An interval of class k meeting [lo, hi] starts at or after lo - 2^k (saturated).
    const int64_t span = k >= 62 ? kMin : int64_t{1} << k;
    const int64_t from = (span == kMin || lo < kMin + span) ? kMin : lo - span;
    const auto& m = by_start_[k];
    for (auto it = m.lower_bound({from, 0}); it != m.end() && it->first.first <= hi; ++it)
      if (it->second >= lo) out.push_back(it->first.second);
  }
}

void IntervalIndex::all(std::vector<uint64_t>& out) const {
  for (auto& m : by_start_) for (auto& [key, end] : m) out.push_back(key.second);
}

void IntervalIndex::clear() {
  for (auto& m : by_start_) m.clear();
  used_ = 0;
}

// ---- AccessList ----------------------------------------------------------------------------

void AccessList::push(const Access& a) {
  const uint64_t seq = next_++;
  recs_.push_back(a);
  seqs_.push_back(seq);
  if (indexed_) {
    index(seq, a);
  } else if (recs_.size() > kIndexFrom) {
    for (size_t k = 0; k < recs_.size(); ++k) index(seqs_[k], recs_[k]);
    indexed_ = true;
  }
}

void AccessList::index(uint64_t seq, const Access& a) {
  Phase ph;
  if (phase_of(a.set, ph)) {
    PhaseGroups& pg = by_phase_[ph.period];
    pg.max_width = std::max(pg.max_width, ph.width);
    pg.groups[{ph.residue, ph.width}].insert(a.box.b0, a.box.b1 - a.box.b0, seq);
  } else {
    by_range_.insert(a.box.b0, a.box.b1 - a.box.b0, seq);
  }
}

void AccessList::unindex(uint64_t seq, const Access& a) {
  Phase ph;
  if (phase_of(a.set, ph)) by_phase_[ph.period].groups[{ph.residue, ph.width}].erase(a.box.b0, a.box.b1 - a.box.b0, seq);
  else by_range_.erase(a.box.b0, a.box.b1 - a.box.b0, seq);
}

std::vector<size_t> AccessList::positions_near(const Box& q, const ByteSet& s) const {
  std::vector<size_t> out;
  if (!indexed_) {
    for (size_t k = 0; k < recs_.size(); ++k) out.push_back(k);
    return out;
  }
  std::vector<uint64_t> seqs;
  by_range_.query(q.b0, q.b1, seqs);
  const bool exact = s.runs() <= kExactRuns;
  for (auto& [period, pg] : by_phase_) {
    if (s.empty) continue;  // meets nothing, covers only empty records (never phased)
    // The residues mod `period` the query's bytes lie in: [start, start + len).
    int64_t start = 0, len = 0;
    if (s.n >= 1 && s.stride[0] % period == 0) { start = s.base; len = s.extent[0]; }
    else { start = s.lo(); len = s.hi() - s.lo(); }
    // Every group whose residue window meets [lo, hi] (closed), then its records whose box meets q's.
    auto groups_meeting = [&](int64_t lo, int64_t hi) {
      const int64_t from = lo < kMin + pg.max_width ? kMin : lo - pg.max_width;
      for (auto it = pg.groups.lower_bound({from, kMin}); it != pg.groups.end() && it->first.first <= hi; ++it)
        if (it->first.first + it->first.second >= lo) it->second.query(q.b0, q.b1, seqs);
    };
    if (!exact || len >= period) { groups_meeting(kMin, std::numeric_limits<int64_t>::max()); continue; }
    start = floor_mod(start, period);
    for (int64_t shift : {-period, int64_t{0}, period}) groups_meeting(start + shift, start + shift + len);
  }
  std::sort(seqs.begin(), seqs.end());
  seqs.erase(std::unique(seqs.begin(), seqs.end()), seqs.end());
  out.reserve(seqs.size());
  for (uint64_t seq : seqs)
    out.push_back(static_cast<size_t>(std::lower_bound(seqs_.begin(), seqs_.end(), seq) - seqs_.begin()));
  return out;
}

std::vector<Access*> AccessList::near(const Box& q, const ByteSet& s) {
  std::vector<Access*> out;
  for (size_t at : positions_near(q, s)) out.push_back(&recs_[at]);
  return out;
}

std::vector<Access*> AccessList::latest(size_t n) {
  std::vector<Access*> out;
  for (size_t k = recs_.size(); k-- > 0 && out.size() < n;) out.push_back(&recs_[k]);
  return out;
}

void AccessList::erase(const std::vector<size_t>& positions) {
  size_t next = 0, w = 0;
  for (size_t k = 0; k < recs_.size(); ++k) {
    if (next < positions.size() && positions[next] == k) {
      if (indexed_) unindex(seqs_[k], recs_[k]);
      ++next;
      continue;
    }
    if (w != k) { recs_[w] = recs_[k]; seqs_[w] = seqs_[k]; }
    ++w;
  }
  recs_.resize(w);
  seqs_.resize(w);
}

void AccessList::append(const AccessList& o) {
  for (const Access& a : o.recs_) push(a);
}

void AccessList::clear() {
  recs_.clear();
  seqs_.clear();
  by_range_.clear();
  by_phase_.clear();
  indexed_ = false;
}

}  // namespace trnsim::kernels
