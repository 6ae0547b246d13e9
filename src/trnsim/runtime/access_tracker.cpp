#include "trnsim/runtime/access_tracker.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <unordered_map>

#include "trnsim/runtime/access_cell_index.h"

namespace trnsim::runtime {

namespace {

uint64_t region_of(const isa::AccessPattern& a, uint16_t core) {
  const uint64_t id = a.space == isa::Space::HBM ? a.tensor : core;
  return (static_cast<uint64_t>(a.space) << 32) | id;
}

void merge(AccessTracker::Deps& deps, uint32_t stream, AccessTracker::Dep d) {
  auto [it, fresh] = deps.emplace(stream, d);
  if (!fresh && it->second.pos < d.pos) it->second = d;
}

// Sets the stream's entry (a stream runs in order: its latest position stands for it).
void put(std::vector<AccessTracker::Entry>& v, const AccessTracker::Entry& e) {
  for (AccessTracker::Entry& x : v)
    if (x.stream == e.stream) { x = {e.kernel, e.stream, std::max(x.pos, e.pos)}; return; }
  v.push_back(e);
}

void split(AccessTracker::Map& m, int64_t x) {
  auto it = m.upper_bound(x);
  if (it == m.begin()) return;
  --it;
  if (it->first < x && x < it->second.hi) {
    AccessTracker::Cell right = it->second;
    it->second.hi = x;
    m.emplace(x, std::move(right));
  }
}

// Every byte of [lo, hi) in a cell (empty cells fill the gaps); cells cut at lo and hi.
void cover(AccessTracker::Map& m, int64_t lo, int64_t hi) {
  split(m, lo);
  split(m, hi);
  int64_t at = lo;
  auto it = m.lower_bound(lo);
  while (at < hi) {
    if (it != m.end() && it->first == at) {
      at = it->second.hi;
      ++it;
      continue;
    }
    const int64_t next = (it == m.end() || it->first >= hi) ? hi : it->first;
    it = std::next(m.emplace_hint(it, at, AccessTracker::Cell{next, {}, {}}));
    at = next;
  }
}

// The records of one kernel meeting a stretch between two consecutive boundaries: per stream
// the latest write and the latest read among them.
class Active {
 public:
  void add(const AccessTracker::Record& r) { (r.access.write ? w_ : r_)[r.stream].insert(r.pos); }
  void remove(const AccessTracker::Record& r) {
    auto& m = r.access.write ? w_ : r_;
    auto it = m.find(r.stream);
    it->second.erase(it->second.find(r.pos));
    if (it->second.empty()) m.erase(it);
  }
  bool empty() const { return w_.empty() && r_.empty(); }
  std::vector<AccessTracker::Entry> writers(uint32_t kernel) const { return latest(w_, kernel); }
  std::vector<AccessTracker::Entry> readers(uint32_t kernel) const { return latest(r_, kernel); }

 private:
  using Streams = std::map<uint32_t, std::multiset<uint32_t>>;
  static std::vector<AccessTracker::Entry> latest(const Streams& s, uint32_t kernel) {
    std::vector<AccessTracker::Entry> v;
    for (const auto& [stream, pos] : s) v.push_back({kernel, stream, *pos.rbegin()});
    return v;
  }
  Streams w_, r_;
};

}  // namespace

std::vector<MemAccess> accesses_of(const isa::Op& op, uint16_t core, const std::vector<isa::HbmTensor>& tensors) {
  std::vector<MemAccess> out;
  auto add = [&](const isa::AccessPattern& a, bool write) {
    if (a.space == isa::Space::HBM && !write && tensors[a.tensor].kind == isa::HbmTensor::Kind::Input) return;
    if (a.elements() <= 0) return;
    auto [lo, hi] = a.byte_extent();
    out.push_back({region_of(a, core), lo, hi, write});
  };
  const isa::Operands ops = isa::operands_of(op);
  for (const isa::AccessPattern* w : ops.writes) add(*w, true);
  for (const isa::AccessPattern* r : ops.reads) add(*r, false);
  return out;
}

AccessTracker::Region::Region() = default;
AccessTracker::Region::~Region() = default;
AccessTracker::Region::Region(Region&&) noexcept = default;
AccessTracker::AccessTracker() = default;
AccessTracker::~AccessTracker() = default;
AccessTracker::AccessTracker(AccessTracker&&) noexcept = default;
AccessTracker& AccessTracker::operator=(AccessTracker&&) noexcept = default;

void AccessTracker::conflicts(const MemAccess& a, Deps& deps) const {
  auto r = regions_.find(a.region);
  if (r == regions_.end()) return;
  const Region& reg = r->second;
  if (reg.index) return reg.index->conflicts(a.lo, a.hi, a.write, deps);
  const Map& m = reg.cells;
  auto it = m.upper_bound(a.lo);
  if (it != m.begin() && std::prev(it)->second.hi > a.lo) --it;
  for (; it != m.end() && it->first < a.hi; ++it) {
    ++reg.scanned;
    for (const Entry& e : it->second.writers) merge(deps, e.stream, {e.pos, e.kernel});
    if (a.write)
      for (const Entry& e : it->second.readers) merge(deps, e.stream, {e.pos, e.kernel});
  }
  // Long scans of an unchanged region: an index answers the next ones in O(log cells).
  const auto n = static_cast<int64_t>(m.size());
  if (n >= 64 && reg.scanned > 4 * n) reg.index = std::make_unique<CellIndex>(m);
}

void AccessTracker::record(const std::vector<Record>& records, uint32_t kernel) {
  // Of the records of one stream, kind and byte range only the latest counts (a tile ring's
  // slots are met thousands of times a kernel): one each, in first-seen order.
  struct Key {
    uint64_t region;
    int64_t lo, hi;
    uint32_t stream;
    bool write;
    bool operator==(const Key&) const = default;
  };
  struct Hash {
    size_t operator()(const Key& k) const {
      uint64_t h = k.region * 0x9E3779B97F4A7C15ull;
      for (uint64_t v : {static_cast<uint64_t>(k.lo), static_cast<uint64_t>(k.hi), uint64_t{k.stream} * 2 + k.write})
        h = (h ^ v) * 0x100000001B3ull + (h >> 29);
      return static_cast<size_t>(h);
    }
  };
  std::unordered_map<Key, size_t, Hash> latest;
  std::vector<const Record*> kept;
  for (const Record& r : records) {
    if (r.access.lo >= r.access.hi) continue;
    auto [it, fresh] = latest.emplace(Key{r.access.region, r.access.lo, r.access.hi, r.stream, r.access.write}, kept.size());
    if (fresh) kept.push_back(&r);
    else if (kept[it->second]->pos < r.pos) kept[it->second] = &r;
  }
  std::map<uint64_t, std::vector<const Record*>> by_region;
  for (const Record* r : kept) by_region[r->access.region].push_back(r);
  for (const auto& [region, recs] : by_region) apply(regions_[region], recs, kernel);
}

// One sweep over the kernel's boundaries in the region: between two consecutive boundaries
// the same records apply, so each stretch is updated once, as the records one by one would.
void AccessTracker::apply(Region& reg, const std::vector<const Record*>& records, uint32_t kernel) {
  reg.index.reset();
  reg.scanned = 0;
  std::vector<std::tuple<int64_t, bool, const Record*>> events;  // (byte, starts, record)
  for (const Record* r : records) {
    events.emplace_back(r->access.lo, true, r);
    events.emplace_back(r->access.hi, false, r);
  }
  std::sort(events.begin(), events.end(),
            [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  Map& m = reg.cells;
  Active active;
  for (size_t e = 0; e < events.size();) {
    const int64_t x0 = std::get<0>(events[e]);
    for (; e < events.size() && std::get<0>(events[e]) == x0; ++e) {
      const auto& [x, starts, r] = events[e];
      if (starts) active.add(*r); else active.remove(*r);
    }
    if (active.empty() || e == events.size()) continue;
    const int64_t x1 = std::get<0>(events[e]);
    const std::vector<Entry> writers = active.writers(kernel), readers = active.readers(kernel);
    cover(m, x0, x1);
    auto first = m.lower_bound(x0), last = m.lower_bound(x1);
    const bool fresh = std::all_of(first, last, [&](const auto& c) {
      auto mine = [&](const Entry& x) { return x.kernel >= kernel; };
      return std::none_of(c.second.writers.begin(), c.second.writers.end(), mine) &&
             std::none_of(c.second.readers.begin(), c.second.readers.end(), mine);
    });
    if (!writers.empty() && fresh) {  // the write replaces every earlier kernel's entry: one cell
      m.erase(first, last);
      m.emplace(x0, Cell{x1, writers, readers});
      continue;
    }
    for (auto it = first; it != last; ++it) {
      Cell& c = it->second;
      if (!writers.empty()) {
        auto older = [&](const Entry& x) { return x.kernel < kernel; };
        c.writers.erase(std::remove_if(c.writers.begin(), c.writers.end(), older), c.writers.end());
        c.readers.erase(std::remove_if(c.readers.begin(), c.readers.end(), older), c.readers.end());
      }
      for (const Entry& w : writers) put(c.writers, w);
      for (const Entry& r : readers) put(c.readers, r);
    }
  }
}

}  // namespace trnsim::runtime
