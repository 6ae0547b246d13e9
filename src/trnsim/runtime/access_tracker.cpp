#include "trnsim/runtime/access_tracker.h"

#include <algorithm>
#include <type_traits>

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

void AccessTracker::conflicts(const MemAccess& a, Deps& deps) const {
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

void AccessTracker::split(Map& m, int64_t x) {
  auto it = m.upper_bound(x);
  if (it == m.begin()) return;
  --it;
  if (it->first < x && x < it->second.hi) {
    Cell right = it->second;
    it->second.hi = x;
    m.emplace(x, std::move(right));
  }
}

void AccessTracker::record(const MemAccess& a, uint32_t kernel, uint32_t stream, uint32_t pos) {
  Map& m = regions_[a.region];
  split(m, a.lo);
  split(m, a.hi);
  // Fill the gaps inside [lo, hi) with empty cells, so that every byte has one.
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
  for (auto it = m.lower_bound(a.lo); it != m.end() && it->first < a.hi; ++it) {
    Cell& c = it->second;
    if (a.write) {
      auto older = [&](const Entry& e) { return e.kernel < kernel; };
      c.writers.erase(std::remove_if(c.writers.begin(), c.writers.end(), older), c.writers.end());
      c.readers.erase(std::remove_if(c.readers.begin(), c.readers.end(), older), c.readers.end());
      put(c.writers);
    } else {
      put(c.readers);
    }
  }
}

}  // namespace trnsim::runtime
