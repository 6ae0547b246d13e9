// The builder: allocation, instruction placement and the dependency tracker that turns
// overlapping accesses into semaphore waits.
//
// Tracking. Each buffer (an SBUF/PSUM allocation or an HBM tensor) keeps the accesses since its
// last covering write (indexed by byte range and phase, access_index.h): writers and readers, each a (partition range x byte range) box, the exact
// byte set of the pattern (access_overlap.h) and the stream and index of the instruction. A new
// instruction waits for the writers its reads overlap (RAW), and for the writers and readers its
// writes overlap (WAW, WAR); accesses overlap when their boxes meet (the fast reject) and their
// byte sets share a byte (or the exact test would cost too much: then they are assumed to). So
// cores writing interleaved column ranges or heads of one tensor do not wait for each other. A
// write drops the records whose every byte it certainly rewrites. Waits on a stream already waited for by an earlier instruction
// of the same stream are dropped (streams are in order). A freed allocation's records pass to
// the allocations that reuse its bytes.
//
// Semaphores. One per stream. At build(), only instructions that something waits on signal;
// a wait on instruction i of stream Q becomes "semaphore Q >= number of signalling
// instructions of Q up to i".
#include "trnsim/kernels/kernel_builder.h"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/kernels/access_index.h"
#include "trnsim/kernels/access_overlap.h"
#include "trnsim/isa/validate.h"
#include "trnsim/common/limits.h"

namespace trnsim::kernels {

using isa::AccessPattern;
using isa::Instruction;

namespace {
constexpr int64_t kAlign = 64;  // allocation granularity, bytes per partition

Box box_of(const AccessPattern& ap) {
  auto [lo, hi] = ap.byte_extent();
  if (ap.space == isa::Space::HBM) return {0, 1, lo, hi};
  return {ap.start_partition, ap.start_partition + ap.partitions, lo, hi};
}

struct Buffer {
  int core = 0;
  isa::Space space = isa::Space::SBUF;
  int64_t lo = 0, hi = 0;  // allocation bytes per partition (SBUF/PSUM)
  bool live = true;
  bool held = false;       // placed at a fixed offset for other kernels too (sbuf_tile_at)
  AccessList writers, readers;  // indexed by byte range (access_index.h)
};

// Two accesses of one buffer touch a common byte (of a common partition); true when unsure.
bool conflict(const Box& ab, const ByteSet& as, const Box& bb, const ByteSet& bs) {
  return ab.overlaps(bb) && bytes_intersect(as, bs).value_or(true);
}

struct Dep {
  uint32_t stream, index;
};

// First-fit allocator over [0, capacity) bytes per partition.
struct Allocator {
  int64_t capacity = 0;
  std::vector<std::pair<int64_t, int64_t>> used;  // sorted [lo, hi)
  int64_t find(int64_t size, int64_t bank) const {
    int64_t at = 0;
    auto fits = [&](int64_t lo) {
      if (lo + size > capacity) return false;
      if (bank > 0 && size <= bank && lo / bank != (lo + size - 1) / bank) return false;
      if (bank > 0 && size > bank && lo % bank) return false;
      for (auto& [a, b] : used) if (lo < b && a < lo + size) return false;
      return true;
    };
    std::vector<int64_t> cands = {0};
    for (auto& [a, b] : used) cands.push_back(b);
    std::sort(cands.begin(), cands.end());
    for (int64_t c : cands) {
      at = (c + kAlign - 1) / kAlign * kAlign;
      if (bank > 0 && size > bank) at = (at + bank - 1) / bank * bank;
      if (fits(at)) return at;
      if (bank > 0 && size <= bank) {  // try the next bank start
        int64_t nb = (at / bank + 1) * bank;
        if (fits(nb)) return nb;
      }
    }
    return -1;
  }
  void take(int64_t lo, int64_t hi) {
    used.push_back({lo, hi});
    std::sort(used.begin(), used.end());
  }
  void give(int64_t lo) {
    used.erase(std::remove_if(used.begin(), used.end(), [&](auto& r) { return r.first == lo; }), used.end());
  }
  int64_t largest_gap() const {
    int64_t best = 0, at = 0;
    for (auto& [a, b] : used) { best = std::max(best, a - at); at = std::max(at, b); }
    return std::max(best, capacity - at);
  }
};

std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += fmt::format("{}{}", i ? ", " : "", s[i]);
  return r + "]";
}
}  // namespace

// Host bytes an appended instruction costs while a program is built (the instruction, its
// dependency records): 622 measured on a 65,536^3 matmul (6.2 M instructions, 3.7 GiB peak),
// with headroom, so programs are refused before their instruction streams exhaust memory.
constexpr int64_t kHostBytesPerInstruction = 640;

struct KernelBuilder::Impl {
  isa::Program program;
  int streams_per_core = 0;
  std::vector<Buffer> buffers;                 // HBM tensors first, then allocations
  std::vector<std::vector<int>> graveyard;     // per (core, space): freed buffer ids
  std::vector<Allocator> sbuf, psum;           // per core
  std::vector<int64_t> sbuf_peak;              // per core: highest SBUF byte of the kernel's own tiles
  std::vector<int> rr;                         // per core: next DMA queue
  // Per stream: dependencies of each instruction (flat), who needs a signal.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> dep_range;  // [begin, end) in deps
  std::vector<Dep> deps;
  std::vector<Dep> pending;                    // waits of the instruction being appended
  std::vector<int> tensor_buffer;              // HBM tensor id -> buffer id
  std::vector<std::vector<int>> live;          // per (core, space): live allocation ids
  std::vector<std::vector<char>> needed;
  std::vector<std::vector<uint32_t>> known;    // per stream: per other stream, waited index + 1
  bool built = false;
  // Instructions appended so far, and the most this builder may hold (memory_budget()).
  int64_t emitted = 0, max_instructions = 0;

  uint32_t stream_id(int core, Engine e, int queue) const {
    return static_cast<uint32_t>(core * streams_per_core + (e == Engine::Dma ? isa::kComputeEngines + queue : static_cast<int>(e)));
  }
  std::vector<Instruction>& stream(uint32_t s) {
    auto& cp = program.cores[s / streams_per_core];
    int k = static_cast<int>(s % streams_per_core);
    return k < isa::kComputeEngines ? cp.engines[k] : cp.dma_queues[k - isa::kComputeEngines];
  }
  int graveyard_slot(int core, isa::Space sp) const { return core * 2 + (sp == isa::Space::PSUM ? 1 : 0); }
};

KernelBuilder::KernelBuilder(const hw::ChipSpec& chip, BuilderOptions opts)
    : chip_(chip), opts_(opts), impl_(std::make_unique<Impl>()) {
  impl_->max_instructions = memory_limit_bytes() / 4 / kHostBytesPerInstruction - std::max<int64_t>(opts.instructions_before, 0);
  if (opts.cores < 1 || opts.cores > chip.neuron_cores)
    throw ShapeError(fmt::format("KernelBuilder: {} cores requested, {} has {}", opts.cores, chip.name, chip.neuron_cores));
  int max_queues = chip.core.dma.engines * chip.core.dma.queues_per_engine;
  if (opts.dma_queues < 1 || opts.dma_queues > max_queues)
    throw ShapeError(fmt::format("KernelBuilder: {} DMA queues requested, a core has {}", opts.dma_queues, max_queues));
  auto& I = *impl_;
  I.program.name = "kernel";
  I.program.cores.resize(opts.cores);
  for (auto& c : I.program.cores) c.dma_queues.resize(opts.dma_queues);
  I.streams_per_core = isa::kComputeEngines + opts.dma_queues;
  int nstreams = opts.cores * I.streams_per_core;
  I.dep_range.resize(nstreams);
  I.live.resize(opts.cores * 2);
  I.needed.resize(nstreams);
  I.known.assign(nstreams, std::vector<uint32_t>(nstreams, 0));
  I.graveyard.resize(opts.cores * 2);
  I.sbuf.resize(opts.cores);
  I.psum.resize(opts.cores);
  for (int c = 0; c < opts.cores; ++c) {
    I.sbuf[c].capacity = static_cast<int64_t>(chip.core.sbuf.bytes_per_partition.value());
    I.psum[c].capacity = static_cast<int64_t>(chip.core.psum.bytes_per_partition.value());
  }
  I.rr.assign(opts.cores, 0);
  I.sbuf_peak.assign(opts.cores, 0);
}

KernelBuilder::~KernelBuilder() = default;

void KernelBuilder::set_name(std::string name) { impl_->program.name = std::move(name); }

void KernelBuilder::set_core(int core) {
  if (core < 0 || core >= opts_.cores)
    throw ShapeError(fmt::format("set_core({}): the builder has {} cores", core, opts_.cores));
  core_ = core;
}

size_t KernelBuilder::instructions() const { return impl_->program.instruction_count(); }

// ---- tensors and tiles ---------------------------------------------------------------------

namespace {
Tensor make_tensor(KernelBuilder::Impl& I, const std::string& name, std::vector<int64_t> shape,
                   DType t, isa::HbmTensor::Kind kind) {
  if (I.program.tensor_index(name) >= 0) throw ShapeError(fmt::format("tensor '{}' declared twice", name));
  if (shape.empty()) throw ShapeError(fmt::format("tensor '{}' needs at least one axis", name));
  for (auto d : shape) if (d < 1) throw ShapeError(fmt::format("tensor '{}' has shape {}", name, shape_str(shape)));
  if (shape.size() > isa::kMaxFreeDims + 1) throw ShapeError(fmt::format("tensor '{}': at most 5 axes", name));
  if (numerics::is_block_format(t))
    throw UnsupportedError(fmt::format("tensor '{}': block format {} (store elements and scales as separate tensors)", name, numerics::name(t)));
  auto id = static_cast<uint32_t>(I.program.tensors.size());
  I.program.tensors.push_back(isa::HbmTensor{name, shape, t, kind});
  int buf = static_cast<int>(I.buffers.size());
  Buffer b;
  b.space = isa::Space::HBM;
  I.buffers.push_back(b);
  I.tensor_buffer.push_back(buf);
  AccessPattern a;
  a.space = isa::Space::HBM;
  a.dtype = t;
  a.tensor = id;
  Tensor base(View(a, shape, buf), static_cast<int>(id), name);
  View v = base.with_partition_axis(0);
  return Tensor(v, static_cast<int>(id), name);
}
}  // namespace

Tensor KernelBuilder::hbm_input(const std::string& name, std::vector<int64_t> shape, DType t) {
  return make_tensor(*impl_, name, std::move(shape), t, isa::HbmTensor::Kind::Input);
}
Tensor KernelBuilder::hbm_output(const std::string& name, std::vector<int64_t> shape, DType t) {
  return make_tensor(*impl_, name, std::move(shape), t, isa::HbmTensor::Kind::Output);
}
Tensor KernelBuilder::hbm_scratch(const std::string& name, std::vector<int64_t> shape, DType t) {
  return make_tensor(*impl_, name, std::move(shape), t, isa::HbmTensor::Kind::Internal);
}

namespace {
Tile allocate(KernelBuilder::Impl& I, int core, isa::Space sp, std::vector<int64_t> shape, DType t,
              const std::string& name, Allocator& alloc, int64_t bank, int64_t fixed = -1) {
  const char* what = sp == isa::Space::SBUF ? "sbuf_tile" : "psum_tile";
  std::string label = fmt::format("{}{}{} {} {}", what, name.empty() ? "" : " '", name.empty() ? "" : name + "'",
                                  shape_str(shape), numerics::name(t));
  if (shape.size() < 2 || shape.size() > isa::kMaxFreeDims + 1)
    throw ShapeError(label + ": shape must be {partitions, free...} with 1 to 4 free axes");
  if (shape[0] < 1 || shape[0] > isa::kMaxPartitions)
    throw ShapeError(label + fmt::format(": {} partitions, a core has {}", shape[0], isa::kMaxPartitions));
  int64_t free = 1;
  for (size_t i = 1; i < shape.size(); ++i) {
    if (shape[i] < 1) throw ShapeError(label + ": empty axis");
    free *= shape[i];
  }
  if (numerics::is_block_format(t)) throw UnsupportedError(label + ": block formats are not tile dtypes");
  int bits = numerics::info(t).bits;
  int64_t bytes = free * (bits >= 8 ? bits / 8 : 1);
  int64_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  if (bank > 0 && rounded > bank) rounded = (rounded + bank - 1) / bank * bank;
  int64_t at = fixed >= 0 ? fixed : alloc.find(rounded, bank);
  if (fixed >= 0) {
    bool clash = fixed % kAlign != 0 || fixed + rounded > alloc.capacity;
    for (auto& [a, b] : alloc.used) clash = clash || (fixed < b && a < fixed + rounded);
    if (clash)
      throw ShapeError(label + fmt::format(": bytes [{}, {}) per partition of {} are not free", fixed, fixed + rounded, isa::space_name(sp)));
  }
  if (at < 0)
    throw ShapeError(label + fmt::format(": needs {} bytes per partition but the largest free gap of {} is {} "
                                         "bytes ({} per partition, {} live tiles); free tiles or use smaller ones",
                                         bytes, isa::space_name(sp), alloc.largest_gap(), alloc.capacity, alloc.used.size()));
  alloc.take(at, at + rounded);
  int buf = static_cast<int>(I.buffers.size());
  Buffer b;
  b.core = core;
  b.space = sp;
  b.lo = at;
  b.hi = at + rounded;
  b.held = fixed >= 0;
  if (sp == isa::Space::SBUF && fixed < 0) I.sbuf_peak[core] = std::max(I.sbuf_peak[core], b.hi);
  // Inherit the records of freed buffers whose bytes this one reuses.
  auto& grave = I.graveyard[I.graveyard_slot(core, sp)];
  for (size_t g = 0; g < grave.size();) {
    Buffer& old = I.buffers[grave[g]];
    if (old.lo < b.hi && b.lo < old.hi) {
      b.writers.append(old.writers);
      b.readers.append(old.readers);
      if (b.lo <= old.lo && old.hi <= b.hi) {
        old.writers.clear(); old.readers.clear();
        grave.erase(grave.begin() + static_cast<long>(g));
        continue;
      }
    }
    ++g;
  }
  I.buffers.push_back(std::move(b));
  I.live[I.graveyard_slot(core, sp)].push_back(buf);
  AccessPattern a;
  a.space = sp;
  a.dtype = t;
  a.partitions = static_cast<uint16_t>(shape[0]);
  a.offset = at;
  a.ndims = static_cast<uint8_t>(shape.size() - 1);
  int64_t stride = 1;
  for (int d = a.ndims - 1; d >= 0; --d) {
    a.dims[d] = {static_cast<int32_t>(stride), static_cast<int32_t>(shape[d + 1])};
    stride *= shape[d + 1];
  }
  return Tile(View(a, std::move(shape), buf), buf);
}
}  // namespace

Tile KernelBuilder::sbuf_tile(std::vector<int64_t> shape, DType t, const std::string& name) {
  return allocate(*impl_, core_, isa::Space::SBUF, std::move(shape), t, name, impl_->sbuf[core_], 0);
}

Tile KernelBuilder::sbuf_tile_at(int64_t offset, std::vector<int64_t> shape, DType t, const std::string& name) {
  return allocate(*impl_, core_, isa::Space::SBUF, std::move(shape), t, name, impl_->sbuf[core_], 0, offset);
}

Tile KernelBuilder::psum_tile(std::vector<int64_t> shape, DType t, const std::string& name) {
  return allocate(*impl_, core_, isa::Space::PSUM, std::move(shape), t, name, impl_->psum[core_], isa::kPsumBankBytes);
}

void KernelBuilder::free(const Tile& t) {
  auto& I = *impl_;
  if (t.allocation() < 0 || t.allocation() >= static_cast<int>(I.buffers.size())) throw ShapeError("free: not a tile");
  Buffer& b = I.buffers[t.allocation()];
  if (!b.live) throw ShapeError("free: tile freed twice");
  b.live = false;
  (b.space == isa::Space::SBUF ? I.sbuf : I.psum)[b.core].give(b.lo);
  I.graveyard[I.graveyard_slot(b.core, b.space)].push_back(t.allocation());
  auto& live = I.live[I.graveyard_slot(b.core, b.space)];
  live.erase(std::remove(live.begin(), live.end(), t.allocation()), live.end());
}

int64_t KernelBuilder::sbuf_free_bytes_per_partition() const {
  const auto& a = impl_->sbuf[core_];
  int64_t used = 0;
  for (auto& [lo, hi] : a.used) used += hi - lo;
  for (int id : impl_->live[impl_->graveyard_slot(core_, isa::Space::SBUF)])
    if (impl_->buffers[id].held) used -= impl_->buffers[id].hi - impl_->buffers[id].lo;
  return a.capacity - used;
}

int64_t KernelBuilder::sbuf_peak_bytes_per_partition() const {
  return *std::max_element(impl_->sbuf_peak.begin(), impl_->sbuf_peak.end());
}

int KernelBuilder::psum_free_banks() const {
  const auto& a = impl_->psum[core_];
  int n = 0;
  for (int64_t b = 0; b < a.capacity; b += isa::kPsumBankBytes) {
    bool used = false;
    for (auto& [lo, hi] : a.used) used = used || (lo < b + isa::kPsumBankBytes && b < hi);
    n += !used;
  }
  return n;
}

// ---- emitting ------------------------------------------------------------------------------

namespace {

// The buffer an access pattern lies in: an HBM tensor, or the live allocation of its core and
// space holding its bytes (-1: none, e.g. raw patterns outside any tile).
int resolve(KernelBuilder::Impl& I, int core, const AccessPattern& ap) {
  if (ap.space == isa::Space::HBM) return I.tensor_buffer.at(ap.tensor);
  auto [lo, hi] = ap.byte_extent();
  for (int id : I.live[I.graveyard_slot(core, ap.space)]) {
    const Buffer& b = I.buffers[id];
    if (b.lo <= lo && hi <= b.hi) return id;
  }
  return -1;
}

using isa::Operands;
using isa::operands_of;

// Phase 1 (record=false): collect the waits into I.pending. Phase 2 (record=true): record the
// instruction's accesses under its final index.
void track(KernelBuilder::Impl& I, int core, uint32_t s, uint32_t idx, const Operands& ops, bool record) {
  std::vector<Dep> found;
  auto dep = [&](const Access& a) {
    if (a.stream == s) return;
    for (auto& f : found) if (f.stream == a.stream) { f.index = std::max(f.index, a.index); return; }
    found.push_back({a.stream, a.index});
  };
  struct Use { int b; Box bx; ByteSet set; };
  std::vector<Use> rd, wr;
  for (auto* ap : ops.reads) if (int b = resolve(I, core, *ap); b >= 0) rd.push_back({b, box_of(*ap), byte_set(*ap)});
  for (auto* ap : ops.writes) if (int b = resolve(I, core, *ap); b >= 0) wr.push_back({b, box_of(*ap), byte_set(*ap)});
  if (!record) {
    for (auto& [b, bx, set] : rd)
      for (Access* w : I.buffers[b].writers.near(bx, set)) if (conflict(w->box, w->set, bx, set)) dep(*w);
    for (auto& [b, bx, set] : wr) {
      for (Access* w : I.buffers[b].writers.near(bx, set)) if (conflict(w->box, w->set, bx, set)) dep(*w);
      for (Access* r : I.buffers[b].readers.near(bx, set)) if (conflict(r->box, r->set, bx, set)) dep(*r);
    }
    // Keep only waits not implied by earlier waits of this (in-order) stream.
    auto& known = I.known[s];
    I.pending.clear();
    for (auto& f : found) {
      if (known[f.stream] > f.index) continue;
      known[f.stream] = f.index + 1;
      I.pending.push_back(f);
      I.needed[f.stream][f.index] = 1;
    }
    return;
  }
  // Record the accesses (an instruction's own reads never order its own writes).
  for (auto& [b, bx, set] : rd) {
    auto& readers = I.buffers[b].readers;
    // Repeated reads of the same bytes by one stream: keep only the latest (in-order stream).
    bool merged = false;
    for (Access* r : readers.latest(4))
      if (r->stream == s && r->box.covers(bx) && bx.covers(r->box) && r->set == set) {
        r->index = idx;
        merged = true;
        break;
      }
    if (!merged) readers.push({bx, set, s, idx});
  }
  for (auto& [b, bx, set] : wr) {
    Buffer& buf = I.buffers[b];
    // Only records whose every byte this write replaces: a later access meeting them meets
    // this write, which waited for them.
    auto covered = [&](const Access& a) { return bx.covers(a.box) && bytes_cover(set, a.set); };
    buf.writers.erase_near(bx, set, covered);
    buf.readers.erase_near(bx, set, covered);
    buf.writers.push({bx, set, s, idx});
  }
}

}  // namespace

namespace {

// The refusal of a program past the budget: `needs` says how many instructions it needs.
[[noreturn]] void refuse_program(const std::string& program, const std::string& needs, int64_t before, int64_t held) {
  const std::string also = before > 0 ? fmt::format(" beside the {} of the model's earlier programs", before) : "";
  throw ShapeError(fmt::format("program '{}' needs {} instructions{}, {} of host memory or more to build: above a quarter "
                               "of the memory limit of {} (set {} to raise it); use smaller shapes",
                               program, needs, also, gib(static_cast<double>(held) * kHostBytesPerInstruction),
                               gib(static_cast<double>(memory_limit_bytes())), kMemoryLimitVariable));
}

}  // namespace

void KernelBuilder::expect_instructions(int64_t n) const {
  if (n <= impl_->max_instructions) return;
  const int64_t before = opts_.instructions_before;
  refuse_program(impl_->program.name, fmt::format("about {}", n), before, n > INT64_MAX - before ? INT64_MAX : n + before);
}

void KernelBuilder::emit(Engine e, int queue, isa::Op op, const Opts& o) {
  auto& I = *impl_;
  if (I.built) throw Error("KernelBuilder: build() was already called");
  if (e == Engine::Dma) {
    if (queue < 0) { queue = I.rr[core_]; I.rr[core_] = (I.rr[core_] + 1) % opts_.dma_queues; }
    if (queue >= opts_.dma_queues)
      throw ShapeError(fmt::format("DMA queue {} requested, the builder uses {}", queue, opts_.dma_queues));
  } else {
    queue = 0;
  }
  if (++I.emitted > I.max_instructions)
    refuse_program(I.program.name, fmt::format("more than {}", I.max_instructions), opts_.instructions_before,
                   I.emitted + opts_.instructions_before);
  Instruction ins{std::move(op), {}};
  try {
    isa::validate(ins, e, chip_, I.program);
  } catch (const ShapeError& err) {
    throw ShapeError(o.name.empty() ? std::string(err.what()) : o.name + ": " + err.what());
  } catch (const UnsupportedError& err) {
    throw UnsupportedError(o.name.empty() ? std::string(err.what()) : o.name + ": " + err.what());
  }
  uint32_t s = I.stream_id(core_, e, queue);
  auto& st = I.stream(s);
  const Operands ops = operands_of(ins.op);
  track(I, core_, s, 0, ops, false);
  // More producers than a sync header holds: put the extra waits on Nops just before.
  size_t k = 0;
  while (I.pending.size() - k > isa::Sync::kMaxWaits) {
    auto b = static_cast<uint32_t>(I.deps.size());
    I.deps.insert(I.deps.end(), I.pending.begin() + k, I.pending.begin() + k + isa::Sync::kMaxWaits);
    I.dep_range[s].push_back({b, static_cast<uint32_t>(I.deps.size())});
    k += isa::Sync::kMaxWaits;
    st.push_back(Instruction{isa::Nop{}, {}});
    I.needed[s].push_back(0);
  }
  track(I, core_, s, static_cast<uint32_t>(st.size()), ops, true);
  I.needed[s].push_back(0);
  auto b = static_cast<uint32_t>(I.deps.size());
  I.deps.insert(I.deps.end(), I.pending.begin() + static_cast<long>(k), I.pending.end());
  I.dep_range[s].push_back({b, static_cast<uint32_t>(I.deps.size())});
  st.push_back(std::move(ins));
}

isa::Program KernelBuilder::build() {
  auto& I = *impl_;
  if (I.built) throw Error("KernelBuilder: build() was already called");
  I.built = true;
  const auto nstreams = static_cast<uint32_t>(I.dep_range.size());
  // Signal counts: prefix sums of `needed` per stream.
  std::vector<std::vector<uint32_t>> count(nstreams);
  for (uint32_t s = 0; s < nstreams; ++s) {
    auto& st = I.stream(s);
    count[s].resize(st.size());
    uint32_t c = 0;
    for (size_t i = 0; i < st.size(); ++i) {
      if (I.needed[s][i]) { st[i].sync.signal = static_cast<int32_t>(s); ++c; }
      count[s][i] = c;
    }
  }
  for (uint32_t s = 0; s < nstreams; ++s) {
    auto& st = I.stream(s);
    for (size_t i = 0; i < st.size(); ++i)
      for (uint32_t k = I.dep_range[s][i].first; k < I.dep_range[s][i].second; ++k)
        st[i].sync.add_wait(I.deps[k].stream, count[I.deps[k].stream][I.deps[k].index]);
  }
  I.program.semaphores = nstreams;
  return std::move(I.program);
}

// ---- typed calls ---------------------------------------------------------------------------

namespace {
isa::ScalarOperand scalar_op(const Scalar& s) {
  return s.is_view ? isa::ScalarOperand::tensor(s.view.ap()) : isa::ScalarOperand::immediate(s.imm);
}
Engine pick(const Opts& o, Engine dflt) { return o.engine.value_or(dflt); }
}  // namespace

namespace {
// "name: what" for an error about a named instruction, "what" otherwise.
std::string who(const Opts& o, const char* what) { return o.name.empty() ? what : o.name + ": " + what; }
}  // namespace

void KernelBuilder::load(const View& dst, const View& src, const Opts& o) {
  if (src.ap().space != isa::Space::HBM || dst.ap().space == isa::Space::HBM)
    throw ShapeError(who(o, "load") + ": copies HBM -> SBUF (use dma() for other pairs)");
  dma(dst, src, o);
}

void KernelBuilder::load_broadcast(const View& dst, const View& src, const Opts& o) {
  if (src.ap().space != isa::Space::HBM || src.ap().partition_stride != 0 || dst.partitions() < 2 || dst.ap().space != isa::Space::SBUF)
    return load(dst, src, o);
  auto first = [](const View& v) {
    isa::AccessPattern ap = v.ap();
    ap.partitions = 1;
    std::vector<int64_t> shape = v.shape();
    shape[0] = 1;
    return View(ap, shape, v.buffer());
  };
  const View row = first(dst);
  load(row, first(src), o);
  // GpSimd addresses partition ranges from 0 (or aligned starts): the whole tile, row 0 included.
  partition_broadcast(dst, row);
}

void KernelBuilder::store(const View& dst, const View& src, const Opts& o) {
  if (dst.ap().space != isa::Space::HBM || src.ap().space == isa::Space::HBM)
    throw ShapeError(who(o, "store") + ": copies SBUF/PSUM -> HBM (use dma() for other pairs)");
  dma(dst, src, o);
}

void KernelBuilder::dma(const View& dst, const View& src, const Opts& o) {
  emit(Engine::Dma, o.queue, isa::Dma{dst.ap(), src.ap()}, o);
}

void KernelBuilder::dma_gather(const View& dst, const Tensor& table, const View& index, const Opts& o) {
  const auto& s = table.shape();
  const int64_t rows = s.empty() ? 0 : s[0];
  int64_t row = 1;
  for (size_t i = 1; i < s.size(); ++i) row *= s[i];
  if (rows < 1 || rows > INT32_MAX || row > INT32_MAX)
    throw ShapeError(fmt::format("{}: table '{}' of shape {} (rows and row length must fit 32 bits)", who(o, "dma_gather"), table.name(), shape_str(s)));
  if (dst.free_size() != row)
    throw ShapeError(fmt::format("{}: a row of '{}' has {} elements, a dst partition {}", who(o, "dma_gather"), table.name(), row, dst.free_size()));
  AccessPattern src = table.ap();  // the whole table as [1, rows, row]
  src.offset = 0;
  src.partitions = 1;
  src.partition_stride = 0;
  src.ndims = 2;
  src.dims = {};
  src.dims[0] = {static_cast<int32_t>(row), static_cast<int32_t>(rows)};
  src.dims[1] = {1, static_cast<int32_t>(row)};
  emit(Engine::Dma, o.queue, isa::Dma{dst.ap(), src, true, index.ap()}, o);
}

void KernelBuilder::matmul(const View& out, const View& stationary, const View& moving, bool start,
                           bool stop, bool sparse_stationary, const Opts& o) {
  emit(pick(o, Engine::Tensor), 0, isa::Matmul{out.ap(), stationary.ap(), moving.ap(), start, stop, sparse_stationary}, o);
}

void KernelBuilder::matmul_mx(const View& out, const View& stationary, const View& stationary_scale, const View& moving,
                              const View& moving_scale, bool start, bool stop, const Opts& o) {
  emit(pick(o, Engine::Tensor), 0,
       isa::MatmulMx{out.ap(), stationary.ap(), moving.ap(), stationary_scale.ap(), moving_scale.ap(), start, stop}, o);
}

void KernelBuilder::quantize_mx(const View& out, const View& out_scale, const View& in, const Opts& o) {
  emit(pick(o, Engine::Vector), 0, isa::QuantizeMx{out.ap(), out_scale.ap(), in.ap()}, o);
}

void KernelBuilder::transpose(const View& out, const View& in, const Opts& o) {
  emit(pick(o, Engine::Tensor), 0, isa::Transpose{out.ap(), in.ap()}, o);
}

void KernelBuilder::tensor_tensor(const View& out, const View& in0, const View& in1, AluOp op, const Opts& o) {
  emit(pick(o, Engine::Vector), 0, isa::TensorTensor{out.ap(), in0.ap(), in1.ap(), op}, o);
}

void KernelBuilder::tensor_scalar(const View& out, const View& in, AluOp op0, Scalar s0, AluOp op1,
                                  Scalar s1, bool reverse0, const Opts& o) {
  emit(pick(o, Engine::Vector), 0,
       isa::TensorScalar{out.ap(), in.ap(), op0, scalar_op(s0), op1, scalar_op(s1), reverse0}, o);
}

void KernelBuilder::reduce(const View& out, const View& in, AluOp op, int axes, bool negate, const Opts& o) {
  emit(pick(o, Engine::Vector), 0,
       isa::TensorReduce{out.ap(), in.ap(), op, static_cast<uint8_t>(axes), negate}, o);
}

void KernelBuilder::copy(const View& out, const View& in, const Opts& o) {
  emit(pick(o, Engine::Vector), 0, isa::TensorCopy{out.ap(), in.ap()}, o);
}

void KernelBuilder::select(const View& out, const View& pred, const View& on_true, const View& on_false,
                           const Opts& o) {
  emit(pick(o, Engine::Vector), 0, isa::Select{out.ap(), pred.ap(), on_true.ap(), on_false.ap()}, o);
}

void KernelBuilder::bn_stats(const View& out, const View& in, const Opts& o) {
  emit(pick(o, Engine::Vector), 0, isa::BnStats{out.ap(), in.ap()}, o);
}

void KernelBuilder::bn_aggr(const View& out, const View& in, const Opts& o) {
  emit(pick(o, Engine::Vector), 0, isa::BnAggr{out.ap(), in.ap()}, o);
}

void KernelBuilder::memset(const View& out, float value, const Opts& o) {
  emit(pick(o, Engine::Vector), 0, isa::Memset{out.ap(), value}, o);
}

void KernelBuilder::activation(const View& out, const View& in, ActFunc f, Scalar scale, Scalar bias,
                               const View* accum, const Opts& o) {
  isa::Activation a{out.ap(), in.ap(), f, scalar_op(scale), scalar_op(bias), accum != nullptr, {}};
  if (accum) a.accum = accum->ap();
  emit(pick(o, Engine::Scalar), 0, a, o);
}

void KernelBuilder::iota(const View& out, int32_t base, int32_t partition_multiplier,
                         std::vector<int32_t> free_multipliers, const Opts& o) {
  isa::Iota io{out.ap(), base, partition_multiplier, {0, 0, 0, 0}};
  if (free_multipliers.size() > static_cast<size_t>(out.ap().ndims))
    throw ShapeError(fmt::format("iota: {} free multipliers for {} free axes", free_multipliers.size(), out.ap().ndims));
  // Multipliers align with the innermost axes (a single one is the innermost axis).
  int off = out.ap().ndims - static_cast<int>(free_multipliers.size());
  for (size_t i = 0; i < free_multipliers.size(); ++i) io.free_multiplier[off + i] = free_multipliers[i];
  emit(pick(o, Engine::GpSimd), 0, io, o);
}

void KernelBuilder::partition_reduce(const View& out, const View& in, AluOp op, const Opts& o) {
  emit(pick(o, Engine::GpSimd), 0, isa::PartitionReduce{out.ap(), in.ap(), op}, o);
}

void KernelBuilder::partition_broadcast(const View& out, const View& in, const Opts& o) {
  emit(pick(o, Engine::GpSimd), 0, isa::PartitionBroadcast{out.ap(), in.ap()}, o);
}

void KernelBuilder::gather(const View& out, const View& in, const View& index, const Opts& o) {
  emit(pick(o, Engine::GpSimd), 0, isa::Gather{out.ap(), in.ap(), index.ap()}, o);
}

// ---- scopes and rings ------------------------------------------------------------------------

TileScope::~TileScope() {
  for (auto it = tiles_.rbegin(); it != tiles_.rend(); ++it) kb_.free(*it);
}
Tile TileScope::sbuf(std::vector<int64_t> shape, DType t, const std::string& name) {
  tiles_.push_back(kb_.sbuf_tile(std::move(shape), t, name));
  return tiles_.back();
}
Tile TileScope::psum(std::vector<int64_t> shape, DType t, const std::string& name) {
  tiles_.push_back(kb_.psum_tile(std::move(shape), t, name));
  return tiles_.back();
}

TileRing::TileRing(KernelBuilder& kb, Space space, std::vector<int64_t> shape, DType t, int depth,
                   const std::string& name)
    : kb_(kb) {
  if (depth < 1) throw ShapeError("TileRing: depth must be at least 1");
  for (int i = 0; i < depth; ++i)
    tiles_.push_back(space == Space::PSUM ? kb.psum_tile(shape, t, name) : kb.sbuf_tile(shape, t, name));
}
TileRing::~TileRing() {
  for (auto it = tiles_.rbegin(); it != tiles_.rend(); ++it) kb_.free(*it);
}
const Tile& TileRing::next() {
  const Tile& t = tiles_[i_ % tiles_.size()];
  ++i_;
  return t;
}

}  // namespace trnsim::kernels
