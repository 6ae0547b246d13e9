#include "trnsim/runtime/program_link.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "trnsim/common/error.h"

namespace trnsim::runtime {

using isa::AccessPattern;
using isa::Instruction;

namespace {

// Every access pattern of an instruction (mutable, for renumbering HBM tensors).
template <class F>
void for_each_ap(isa::Op& op, F&& f) {
  std::visit([&](auto& x) {
    using T = std::decay_t<decltype(x)>;
    if constexpr (requires { x.out; }) f(x.out);
    if constexpr (requires { x.dst; }) { f(x.dst); f(x.src); }
    if constexpr (requires { x.in; }) f(x.in);
    if constexpr (requires { x.in0; }) { f(x.in0); f(x.in1); }
    if constexpr (requires { x.stationary; }) { f(x.stationary); f(x.moving); }
    if constexpr (requires { x.stationary_scale; }) { f(x.stationary_scale); f(x.moving_scale); }
    if constexpr (requires { x.out_scale; }) f(x.out_scale);
    if constexpr (std::is_same_v<T, isa::Select>) { f(x.pred); f(x.on_true); f(x.on_false); }
    if constexpr (std::is_same_v<T, isa::Gather>) f(x.index);
    if constexpr (std::is_same_v<T, isa::Dma>) if (x.indirect) f(x.index);
    if constexpr (requires { x.s0; }) { if (x.s0.is_tensor) f(x.s0.ap); if (x.s1.is_tensor) f(x.s1.ap); }
    if constexpr (std::is_same_v<T, isa::Activation>) {
      if (x.scale.is_tensor) f(x.scale.ap);
      if (x.bias.is_tensor) f(x.bias.ap);
      if (x.has_accum) f(x.accum);
    }
  }, op);
}

struct Interval {
  int64_t lo, hi;
};

// SBUF bytes (per partition, any partition) each core of a kernel touches, merged.
std::vector<std::vector<Interval>> sbuf_footprint(const isa::Program& p) {
  std::vector<std::vector<Interval>> out(p.cores.size());
  for (size_t c = 0; c < p.cores.size(); ++c) {
    std::vector<Interval> v;
    auto add = [&](const std::vector<Instruction>& s) {
      for (Instruction ins : s)
        for_each_ap(ins.op, [&](AccessPattern& a) {
          if (a.space != isa::Space::SBUF) return;
          auto [lo, hi] = a.byte_extent();
          v.push_back({lo, hi});
        });
    };
    for (const auto& s : p.cores[c].engines) add(s);
    for (const auto& s : p.cores[c].dma_queues) add(s);
    std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.lo < b.lo; });
    for (const Interval& i : v) {
      if (!out[c].empty() && i.lo <= out[c].back().hi) out[c].back().hi = std::max(out[c].back().hi, i.hi);
      else out[c].push_back(i);
    }
  }
  return out;
}

bool touches(const std::vector<std::vector<Interval>>& fp, size_t core, Interval x) {
  if (core >= fp.size()) return false;
  return std::any_of(fp[core].begin(), fp[core].end(), [&](const Interval& i) { return i.lo < x.hi && x.lo < i.hi; });
}

Instruction nop() { return Instruction{isa::Nop{}, {}}; }

}  // namespace

uint32_t LinkedModel::stream_key(uint16_t core, isa::Engine e, uint16_t queue) const {
  const uint32_t per_core = isa::kComputeEngines + queues;
  return core * per_core + (e == isa::Engine::Dma ? isa::kComputeEngines + queue : static_cast<uint32_t>(e));
}

size_t LinkedModel::kernel_of(uint16_t core, isa::Engine e, uint16_t queue, uint32_t index) const {
  const auto& starts = stream_starts.at(stream_key(core, e, queue));
  auto it = std::upper_bound(starts.begin(), starts.end(), index);
  return static_cast<size_t>(it - starts.begin()) - 1;
}

LinkedModel link_segments(const compiler::CompiledModel& cm, bool prefetch) {
  LinkedModel lm;
  isa::Program& P = lm.program;
  P.name = "model";
  // Tensor names: an alias names its source; constants and graph inputs never change.
  for (const auto& s : cm.segments)
    if (s.kind == compiler::Segment::Kind::Alias) {
      auto it = lm.canonical.find(s.alias_of);
      lm.canonical[s.writes[0]] = it != lm.canonical.end() ? it->second : s.alias_of;
    }
  auto canon = [&](const std::string& n) { auto it = lm.canonical.find(n); return it != lm.canonical.end() ? it->second : n; };
  std::set<std::string> fixed(cm.inputs.begin(), cm.inputs.end());
  for (const auto& [name, t] : cm.graph.tensors)
    if (t.is_const()) fixed.insert(name);
  std::set<std::string> outputs;
  for (const auto& o : cm.outputs) outputs.insert(canon(o));
  std::map<std::pair<std::string, int>, uint32_t> global;  // (name, dtype) -> tensor index

  size_t cores = 1, queues = 1;
  for (const auto& s : cm.segments)
    if (s.kind == compiler::Segment::Kind::Kernel) {
      cores = std::max(cores, s.program.cores.size());
      for (const auto& c : s.program.cores) queues = std::max(queues, c.dma_queues.size());
    }
  lm.queues = static_cast<uint32_t>(queues);
  P.cores.resize(cores);
  for (auto& c : P.cores) c.dma_queues.resize(queues);

  std::vector<std::vector<Interval>> prev_fp;  // SBUF footprint of the previous kernel
  int64_t prev_barrier = -1, prev2_barrier = -1;  // barrier semaphores of kernels s-1, s-2
  uint32_t prev_streams = 0, prev2_streams = 0;
  for (size_t si = 0; si < cm.segments.size(); ++si) {
    const compiler::Segment& seg = cm.segments[si];
    if (seg.kind != compiler::Segment::Kind::Kernel) continue;
    const isa::Program& p = seg.program;
    const size_t k = lm.kernel_segment.size();
    lm.kernel_segment.push_back(si);
    std::vector<uint32_t> remap(p.tensors.size());
    for (size_t t = 0; t < p.tensors.size(); ++t) {
      const isa::HbmTensor& ht = p.tensors[t];
      const std::string name = canon(ht.name);
      const auto key = std::make_pair(name, static_cast<int>(ht.dtype));
      auto it = global.find(key);
      if (it == global.end()) {
        isa::HbmTensor g = ht;
        g.name = name;
        g.shape = {ht.elements()};
        g.kind = fixed.count(name) ? isa::HbmTensor::Kind::Input
                 : outputs.count(name) ? isa::HbmTensor::Kind::Output : isa::HbmTensor::Kind::Internal;
        it = global.emplace(key, static_cast<uint32_t>(P.tensors.size())).first;
        P.tensors.push_back(std::move(g));
      } else if (P.tensors[it->second].shape[0] < ht.elements()) {
        P.tensors[it->second].shape[0] = ht.elements();
      }
      remap[t] = it->second;
    }
    const uint32_t sem_base = P.semaphores;
    const uint32_t barrier = sem_base + p.semaphores;  // signalled once by every stream at its end
    P.semaphores = barrier + 1;
    uint32_t streams = 0;
    auto append = [&](std::vector<Instruction>& dst, const std::vector<Instruction>& src, size_t core, bool dma, uint32_t key) {
      lm.stream_starts[key].resize(k + 1, static_cast<uint32_t>(dst.size()));
      lm.stream_starts[key][k] = static_cast<uint32_t>(dst.size());
      if (src.empty()) return;
      ++streams;
      size_t i = 0;
      // Leading loads of constants into SBUF the previous kernel leaves alone: released early.
      if (prefetch && dma && prev_barrier >= 0)
        for (; i < src.size(); ++i) {
          const auto* d = std::get_if<isa::Dma>(&src[i].op);
          if (!d || d->indirect || src[i].sync.num_waits > 0 || d->src.space != isa::Space::HBM ||
              d->dst.space != isa::Space::SBUF || !fixed.count(canon(p.tensors[d->src.tensor].name)))
            break;
          auto [lo, hi] = d->dst.byte_extent();
          if (touches(prev_fp, core, {lo, hi})) break;
        }
      const size_t lead = i;
      for (size_t j = 0; j < src.size(); ++j) {
        if (j == lead && prev_barrier >= 0) {
          Instruction w = nop();
          w.sync.add_wait(static_cast<uint32_t>(prev_barrier), prev_streams);
          dst.push_back(w);
        }
        Instruction ins = src[j];
        for_each_ap(ins.op, [&](AccessPattern& a) { if (a.space == isa::Space::HBM) a.tensor = remap[a.tensor]; });
        isa::Sync s;
        for (int w = 0; w < ins.sync.num_waits; ++w) s.add_wait(ins.sync.waits[w].semaphore + sem_base, ins.sync.waits[w].value);
        if (j < lead && prev2_barrier >= 0) s.add_wait(static_cast<uint32_t>(prev2_barrier), prev2_streams);
        s.signal = ins.sync.signal >= 0 ? static_cast<int32_t>(ins.sync.signal + sem_base) : -1;
        ins.sync = s;
        dst.push_back(ins);
      }
      lm.prefetched_loads += lead;
      Instruction done = nop();
      done.sync.signal = static_cast<int32_t>(barrier);
      dst.push_back(done);
    };
    for (size_t c = 0; c < p.cores.size(); ++c) {
      for (int e = 0; e < isa::kComputeEngines; ++e)
        append(P.cores[c].engines[static_cast<size_t>(e)], p.cores[c].engines[static_cast<size_t>(e)], c, false,
               lm.stream_key(static_cast<uint16_t>(c), static_cast<isa::Engine>(e), 0));
      for (size_t q = 0; q < p.cores[c].dma_queues.size(); ++q)
        append(P.cores[c].dma_queues[q], p.cores[c].dma_queues[q], c, true,
               lm.stream_key(static_cast<uint16_t>(c), isa::Engine::Dma, static_cast<uint16_t>(q)));
    }
    prev2_barrier = prev_barrier;
    prev2_streams = prev_streams;
    prev_barrier = barrier;
    prev_streams = streams;
    prev_fp = sbuf_footprint(p);
  }
  // Kernels after a stream's last user start at its end (kernel_of needs every start).
  for (size_t c = 0; c < P.cores.size(); ++c)
    for (uint32_t s = 0; s < isa::kComputeEngines + queues; ++s) {
      const bool dma = s >= static_cast<uint32_t>(isa::kComputeEngines);
      const auto& stream = dma ? P.cores[c].dma_queues[s - isa::kComputeEngines] : P.cores[c].engines[s];
      auto& starts = lm.stream_starts[lm.stream_key(static_cast<uint16_t>(c), dma ? isa::Engine::Dma : static_cast<isa::Engine>(s),
                                                    static_cast<uint16_t>(dma ? s - isa::kComputeEngines : 0))];
      starts.resize(lm.kernel_segment.size(), static_cast<uint32_t>(stream.size()));
    }
  return lm;
}

}  // namespace trnsim::runtime
