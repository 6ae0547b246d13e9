#include "trnsim/runtime/dependency_link.h"

#include <algorithm>
#include <vector>

namespace trnsim::runtime {

using isa::Instruction;

namespace {

// A load of a constant or graph input from HBM into SBUF (a weight, a bias, a norm parameter).
bool constant_load(const isa::Op& op, const std::vector<isa::HbmTensor>& tensors) {
  const auto* d = std::get_if<isa::Dma>(&op);
  return d && !d->indirect && d->src.space == isa::Space::HBM && d->dst.space == isa::Space::SBUF &&
         tensors[d->src.tensor].kind == isa::HbmTensor::Kind::Input;
}

}  // namespace

std::vector<Instruction>& DependencyLinker::stream(uint32_t key) {
  const uint32_t per_core = isa::kComputeEngines + lm_.queues;
  auto& core = lm_.program.cores[key / per_core];
  const uint32_t r = key % per_core;
  return r < isa::kComputeEngines ? core.engines[r] : core.dma_queues[r - isa::kComputeEngines];
}

void DependencyLinker::append(std::vector<Instruction>& dst, const std::vector<Instruction>& src, uint16_t core, uint32_t key,
                              uint32_t kernel) {
  auto& waited = waited_[key];
  const auto& tensors = lm_.program.tensors;
  for (Instruction ins : src) {
    const std::vector<MemAccess> acc = accesses_of(ins.op, core, tensors);
    AccessTracker::Deps deps;
    for (const MemAccess& a : acc) tracker_.conflicts(a, deps);
    if (kernel > 0 && constant_load(ins.op, tensors) &&
        std::none_of(deps.begin(), deps.end(), [&](const auto& d) { return d.second.kernel + 1 == kernel; }))
      ++lm_.prefetched_loads;
    std::vector<std::pair<uint32_t, uint32_t>> waits;  // (stream, position)
    for (const auto& [s, d] : deps) {
      if (s == key) continue;  // the same stream runs in order
      auto it = waited.find(s);
      if (it != waited.end() && it->second >= d.pos) continue;  // an earlier instruction here waited already
      waited[s] = d.pos;
      waits.push_back({s, d.pos});
      sources_[s].insert(d.pos);
    }
    size_t i = 0;
    const size_t room = static_cast<size_t>(isa::Sync::kMaxWaits - ins.sync.num_waits);
    while (waits.size() - i > room) {
      Instruction n{isa::Nop{}, {}};
      for (int w = 0; w < isa::Sync::kMaxWaits && i < waits.size(); ++w, ++i)
        n.sync.add_wait(kPlaceholder + waits[i].first, waits[i].second);
      dst.push_back(n);
    }
    for (; i < waits.size(); ++i) ins.sync.add_wait(kPlaceholder + waits[i].first, waits[i].second);
    const auto pos = static_cast<uint32_t>(dst.size());
    dst.push_back(ins);
    for (const MemAccess& a : acc) pending_.push_back({a, key, pos});
    pending_kernel_ = kernel;
  }
}

void DependencyLinker::end_kernel() {
  tracker_.record(pending_, pending_kernel_);
  pending_.clear();
}

void DependencyLinker::finish() {
  isa::Program& P = lm_.program;
  const uint32_t base = P.semaphores;
  const uint32_t per_core = isa::kComputeEngines + lm_.queues;
  P.semaphores = base + per_core * static_cast<uint32_t>(P.cores.size());
  // Progress counts: the n-th source of a stream is done once its semaphore reaches n.
  std::map<uint32_t, std::map<uint32_t, uint32_t>> count;
  std::map<uint32_t, std::vector<uint32_t>> nop_after;  // sources that signal a kernel semaphore already
  for (const auto& [key, positions] : sources_) {
    auto& s = stream(key);
    uint32_t c = 0;
    for (uint32_t pos : positions) {
      count[key][pos] = ++c;
      if (s[pos].sync.signal < 0) s[pos].sync.signal = static_cast<int32_t>(base + key);
      else nop_after[key].push_back(pos);
    }
  }
  for (uint32_t key = 0; key < per_core * P.cores.size(); ++key)
    for (Instruction& ins : stream(key))
      for (int w = 0; w < ins.sync.num_waits; ++w) {
        isa::Wait& wt = ins.sync.waits[w];
        if (wt.semaphore < kPlaceholder) continue;
        const uint32_t from = wt.semaphore - kPlaceholder;
        wt.value = count.at(from).at(wt.value);
        wt.semaphore = base + from;
      }
  for (const auto& [key, after] : nop_after) {
    auto& s = stream(key);
    std::vector<Instruction> out;
    out.reserve(s.size() + after.size());
    size_t a = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      out.push_back(std::move(s[i]));
      if (a < after.size() && after[a] == i) {
        Instruction n{isa::Nop{}, {}};
        n.sync.signal = static_cast<int32_t>(base + key);
        out.push_back(n);
        ++a;
      }
    }
    s = std::move(out);
    for (uint32_t& st : lm_.stream_starts[key])
      st += static_cast<uint32_t>(std::lower_bound(after.begin(), after.end(), st) - after.begin());
  }
}

}  // namespace trnsim::runtime
