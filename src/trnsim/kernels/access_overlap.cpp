// Exact byte-set intersection of strided patterns.
//
// Method: enumerate the runs of one set (the one with fewer runs) and test each run [x, y)
// against the other set by descending its dims. At dim d the blocks (fixed outer indices, all
// inner indices) of stride s and span e whose span meets [x, y) are a contiguous index range
// [i0, i1]; when the set is nested (s >= e, blocks do not interleave) every block strictly
// between i0 and i1 lies inside [x, y), and a block always holds at least its first byte, so
// three or more candidates mean a hit and otherwise only the two end blocks need a closer
// look: at most 2^dims steps per run. Sets that are not nested (a stride smaller than its
// block, e.g. overlapping windows) are compared by sorting both run lists when they are small.
// Beyond the run budget the answer is "unknown", which callers treat as a conflict.
#include "trnsim/kernels/access_overlap.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace trnsim::kernels {

namespace {
int64_t floor_div(int64_t a, int64_t b) {  // b > 0
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// Does [x, y) meet the set's blocks of dim d placed at `base`?
bool hits(const ByteSet& t, int64_t x, int64_t y, int d, int64_t base) {
  if (d == t.n) return base < y && x < base + t.run;
  const int64_t s = t.stride[d], e = t.extent[d];
  const int64_t i0 = std::max<int64_t>(0, floor_div(x - base - e, s) + 1);
  const int64_t i1 = std::min<int64_t>(t.count[d] - 1, floor_div(y - base - 1, s));
  if (i0 > i1) return false;
  if (i1 - i0 >= 2) return true;
  return hits(t, x, y, d + 1, base + i0 * s) || (i1 != i0 && hits(t, x, y, d + 1, base + i1 * s));
}

// Calls f(start) for every run of `e` (in index order); stops early when f returns true.
template <class F>
bool any_run(const ByteSet& e, F&& f) {
  std::array<int64_t, ByteSet::kMaxDims> idx{};
  int64_t at = e.base;
  while (true) {
    if (f(at)) return true;
    int d = e.n - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < e.count[d]) { at += e.stride[d]; break; }
      at -= (e.count[d] - 1) * e.stride[d];
      idx[d] = 0;
    }
    if (d < 0) return false;
  }
}

std::vector<std::pair<int64_t, int64_t>> merged_runs(const ByteSet& s) {
  std::vector<std::pair<int64_t, int64_t>> r;
  r.reserve(static_cast<size_t>(s.runs()));
  any_run(s, [&](int64_t at) { r.push_back({at, at + s.run}); return false; });
  std::sort(r.begin(), r.end());
  std::vector<std::pair<int64_t, int64_t>> m;
  for (auto& iv : r) {
    if (!m.empty() && iv.first <= m.back().second) m.back().second = std::max(m.back().second, iv.second);
    else m.push_back(iv);
  }
  return m;
}
}  // namespace

int64_t ByteSet::runs() const {
  int64_t r = 1;
  for (int d = 0; d < n; ++d) {
    if (r > (int64_t{1} << 40) / count[d]) return int64_t{1} << 40;  // "too many", without overflow
    r *= count[d];
  }
  return r;
}

bool ByteSet::operator==(const ByteSet& o) const {
  if (empty || o.empty) return empty == o.empty;
  if (base != o.base || run != o.run || n != o.n) return false;
  for (int d = 0; d < n; ++d)
    if (stride[d] != o.stride[d] || count[d] != o.count[d]) return false;
  return true;
}

ByteSet byte_set(const isa::AccessPattern& ap) {
  ByteSet s;
  const int64_t eb = ap.element_bytes();
  s.base = ap.offset;
  s.run = eb;
  std::array<std::pair<int64_t, int64_t>, ByteSet::kMaxDims> dims{};  // (stride bytes, count)
  int n = 0;
  auto add = [&](int64_t stride_elems, int64_t count) {
    if (count <= 0) { s.empty = true; return; }
    if (count == 1 || stride_elems == 0) return;  // a repeated byte adds nothing to the set
    int64_t st = stride_elems * eb;
    if (st < 0) { s.base += (count - 1) * st; st = -st; }  // same set walked forwards
    dims[n++] = {st, count};
  };
  for (int d = 0; d < ap.ndims; ++d) add(ap.dims[d].stride, ap.dims[d].count);
  if (ap.space == isa::Space::HBM) add(ap.partition_stride, ap.partitions);
  // The set does not depend on the order of the dims: outermost = largest stride.
  std::stable_sort(dims.begin(), dims.begin() + n, [](auto& a, auto& b) { return a.first > b.first; });
  // Inner dims whose steps do not leave gaps turn runs into one longer run.
  while (n > 0 && dims[n - 1].first <= s.run) {
    s.run += (dims[n - 1].second - 1) * dims[n - 1].first;
    --n;
  }
  s.n = n;
  int64_t ext = s.run;
  for (int d = n - 1; d >= 0; --d) {
    s.stride[d] = dims[d].first;
    s.count[d] = dims[d].second;
    s.extent[d] = ext;
    if (s.stride[d] < ext) s.nested = false;
    ext += (s.count[d] - 1) * s.stride[d];
  }
  return s;
}

std::optional<bool> bytes_intersect(const ByteSet& a, const ByteSet& b, int64_t max_runs) {
  if (a.empty || b.empty) return false;
  if (a.hi() <= b.lo() || b.hi() <= a.lo()) return false;
  const int64_t ra = a.runs(), rb = b.runs();
  // Enumerate the runs of one set against the other, which must be nested.
  const bool a_vs_b = b.nested && ra <= max_runs, b_vs_a = a.nested && rb <= max_runs;
  if (a_vs_b || b_vs_a) {
    const bool use_a = a_vs_b && (!b_vs_a || ra <= rb);
    const ByteSet& e = use_a ? a : b;
    const ByteSet& t = use_a ? b : a;
    const int64_t tlo = t.lo(), thi = t.hi();
    return any_run(e, [&](int64_t at) { return at < thi && tlo < at + e.run && hits(t, at, at + e.run, 0, t.base); });
  }
  if (ra + rb > max_runs) return std::nullopt;
  const auto ma = merged_runs(a), mb = merged_runs(b);
  for (size_t i = 0, j = 0; i < ma.size() && j < mb.size();) {
    if (ma[i].first < mb[j].second && mb[j].first < ma[i].second) return true;
    if (ma[i].second <= mb[j].second) ++i; else ++j;
  }
  return false;
}

bool bytes_cover(const ByteSet& a, const ByteSet& b) {
  if (a == b) return true;
  if (a.empty || b.empty) return b.empty;
  return a.n == 0 && a.base <= b.lo() && b.hi() <= a.base + a.run;
}

}  // namespace trnsim::kernels
