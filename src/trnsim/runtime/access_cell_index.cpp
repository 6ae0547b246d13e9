#include "trnsim/runtime/access_cell_index.h"

#include <algorithm>

namespace trnsim::runtime {

using Entry = AccessTracker::Entry;

namespace {

bool by_stream(const Entry& a, const Entry& b) { return a.stream < b.stream; }

// Per stream the entry at the latest position (a stream's positions are its order).
void keep_latest(std::vector<Entry>& v) {
  std::stable_sort(v.begin(), v.end(), by_stream);
  size_t out = 0;
  for (const Entry& e : v) {
    if (out > 0 && v[out - 1].stream == e.stream) {
      if (v[out - 1].pos < e.pos) v[out - 1] = e;
    } else {
      v[out++] = e;
    }
  }
  v.resize(out);
}

}  // namespace

CellIndex::Span CellIndex::append_merged(Span a, Span b) {
  Span out{static_cast<uint32_t>(entries_.size()), 0};
  uint32_t i = 0, j = 0;
  while (i < a.count || j < b.count) {
    Entry e;
    if (j == b.count || (i < a.count && entries_[a.off + i].stream < entries_[b.off + j].stream)) {
      e = entries_[a.off + i++];
    } else if (i == a.count || entries_[b.off + j].stream < entries_[a.off + i].stream) {
      e = entries_[b.off + j++];
    } else {
      const Entry x = entries_[a.off + i++], y = entries_[b.off + j++];
      e = x.pos < y.pos ? y : x;
    }
    entries_.push_back(e);
    ++out.count;
  }
  return out;
}

CellIndex::CellIndex(const AccessTracker::Map& cells) : n_(cells.size()) {
  lo_.reserve(n_);
  hi_.reserve(n_);
  writers_.resize(2 * n_);
  all_.resize(2 * n_);
  size_t i = n_;
  for (const auto& [lo, c] : cells) {
    lo_.push_back(lo);
    hi_.push_back(c.hi);
    std::vector<Entry> w = c.writers;
    keep_latest(w);
    std::vector<Entry> a = w;
    a.insert(a.end(), c.readers.begin(), c.readers.end());
    keep_latest(a);
    writers_[i] = {static_cast<uint32_t>(entries_.size()), static_cast<uint32_t>(w.size())};
    entries_.insert(entries_.end(), w.begin(), w.end());
    all_[i] = {static_cast<uint32_t>(entries_.size()), static_cast<uint32_t>(a.size())};
    entries_.insert(entries_.end(), a.begin(), a.end());
    ++i;
  }
  for (size_t k = n_ - 1; k >= 1 && n_ > 1; --k) {
    writers_[k] = append_merged(writers_[2 * k], writers_[2 * k + 1]);
    all_[k] = append_merged(all_[2 * k], all_[2 * k + 1]);
  }
}

void CellIndex::conflicts(int64_t lo, int64_t hi, bool write, AccessTracker::Deps& deps) const {
  // Cells are disjoint and ordered, so their ends are ordered too.
  size_t l = static_cast<size_t>(std::upper_bound(hi_.begin(), hi_.end(), lo) - hi_.begin());
  size_t r = static_cast<size_t>(std::lower_bound(lo_.begin(), lo_.end(), hi) - lo_.begin());
  const std::vector<Span>& spans = write ? all_ : writers_;
  auto visit = [&](size_t node) {
    const Span s = spans[node];
    for (uint32_t k = 0; k < s.count; ++k) {
      const Entry& e = entries_[s.off + k];
      auto [it, fresh] = deps.emplace(e.stream, AccessTracker::Dep{e.pos, e.kernel});
      if (!fresh && it->second.pos < e.pos) it->second = {e.pos, e.kernel};
    }
  };
  for (l += n_, r += n_; l < r; l >>= 1, r >>= 1) {
    if (l & 1) visit(l++);
    if (r & 1) visit(--r);
  }
}

}  // namespace trnsim::runtime
