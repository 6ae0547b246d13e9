#include "trnsim/runtime/program_link.h"

#include <algorithm>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/runtime/dependency_link.h"

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

  DependencyLinker linker(lm);
  int64_t prev_barrier = -1;  // barrier semaphore of the previous kernel (prefetch = false)
  uint32_t prev_streams = 0;
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
    P.semaphores = prefetch ? barrier : barrier + 1;
    uint32_t streams = 0;
    auto append = [&](std::vector<Instruction>& dst, const std::vector<Instruction>& src, size_t core, uint32_t key) {
      lm.stream_starts[key].resize(k + 1, static_cast<uint32_t>(dst.size()));
      lm.stream_starts[key][k] = static_cast<uint32_t>(dst.size());
      if (src.empty()) return;
      ++streams;
      std::vector<Instruction> own(src);  // in the linked program's tensors and semaphores
      for (Instruction& ins : own) {
        for_each_ap(ins.op, [&](AccessPattern& a) { if (a.space == isa::Space::HBM) a.tensor = remap[a.tensor]; });
        for (int w = 0; w < ins.sync.num_waits; ++w) ins.sync.waits[w].semaphore += sem_base;
        if (ins.sync.signal >= 0) ins.sync.signal += static_cast<int32_t>(sem_base);
      }
      if (prefetch) {  // per-instruction dependencies on earlier kernels
        linker.append(dst, own, static_cast<uint16_t>(core), key, static_cast<uint32_t>(k));
        return;
      }
      if (prev_barrier >= 0) {  // strictly after the whole previous kernel
        Instruction w = nop();
        w.sync.add_wait(static_cast<uint32_t>(prev_barrier), prev_streams);
        dst.push_back(w);
      }
      dst.insert(dst.end(), own.begin(), own.end());
      Instruction done = nop();
      done.sync.signal = static_cast<int32_t>(barrier);
      dst.push_back(done);
    };
    for (size_t c = 0; c < p.cores.size(); ++c) {
      for (int e = 0; e < isa::kComputeEngines; ++e)
        append(P.cores[c].engines[static_cast<size_t>(e)], p.cores[c].engines[static_cast<size_t>(e)], c,
               lm.stream_key(static_cast<uint16_t>(c), static_cast<isa::Engine>(e), 0));
      for (size_t q = 0; q < p.cores[c].dma_queues.size(); ++q)
        append(P.cores[c].dma_queues[q], p.cores[c].dma_queues[q], c,
               lm.stream_key(static_cast<uint16_t>(c), isa::Engine::Dma, static_cast<uint16_t>(q)));
    }
    if (prefetch) linker.end_kernel();
    prev_barrier = barrier;
    prev_streams = streams;
  }
  if (prefetch) linker.finish();
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
