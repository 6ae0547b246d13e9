#include "trnsim/isa/program_io.h"

#include <fmt/format.h>

#include <cstring>
#include <type_traits>

#include "trnsim/common/error.h"

namespace trnsim::isa {

// ---- reader basics ------------------------------------------------------------------------

void BinaryReader::fail(const char* what, const std::string& why) const {
  throw Error(fmt::format("{}: corrupt or truncated file: {} at byte {} ({})", source_, what, base_ + pos_, why));
}

void BinaryReader::raw(void* p, size_t n, const char* what) {
  if (n > remaining())
    fail(what, fmt::format("needs {} bytes, {} left", n, remaining()));
  if (n == 0) return;  // an empty vector's data() may be null: memcpy(nullptr, .., 0) is undefined
  std::memcpy(p, data_.data() + pos_, n);
  pos_ += n;
}

bool BinaryReader::boolean(const char* what) {
  const uint8_t v = u8(what);
  if (v > 1) fail(what, fmt::format("boolean byte {}", v));
  return v == 1;
}

size_t BinaryReader::count(const char* what, size_t min_item_bytes) {
  const uint64_t n = u64(what);
  if (min_item_bytes > 0 && n > remaining() / min_item_bytes)
    fail(what, fmt::format("count {} exceeds what the {} bytes left can hold", n, remaining()));
  return static_cast<size_t>(n);
}

std::string BinaryReader::str(const char* what) {
  const size_t n = count(what, 1);
  std::string s(n, '\0');
  raw(s.data(), n, what);
  return s;
}

namespace {

// A tripwire for the format: a field added to an instruction or operand struct must be added to
// fields()/put()/get() below and kCompiledFormatVersion bumped (compiler/compiled_model_io.h).
// Sizes as on the LP64 ABIs the project builds on (padding may hide a small addition; most
// additions change the size).
#if defined(__x86_64__) || defined(__aarch64__)
#define TRNSIM_FORMAT_SIZE(T, n) static_assert(sizeof(T) == (n), #T " changed: update isa/program_io.cpp and the format version")
TRNSIM_FORMAT_SIZE(AccessPattern, 64);
TRNSIM_FORMAT_SIZE(ScalarOperand, 72);
TRNSIM_FORMAT_SIZE(Sync, 40);
TRNSIM_FORMAT_SIZE(Matmul, 200);
TRNSIM_FORMAT_SIZE(TensorScalar, 296);
TRNSIM_FORMAT_SIZE(TensorReduce, 136);
TRNSIM_FORMAT_SIZE(Select, 256);
TRNSIM_FORMAT_SIZE(Memset, 72);
TRNSIM_FORMAT_SIZE(Activation, 352);
TRNSIM_FORMAT_SIZE(Iota, 88);
TRNSIM_FORMAT_SIZE(Gather, 192);
TRNSIM_FORMAT_SIZE(Dma, 200);
TRNSIM_FORMAT_SIZE(HbmTensor, 64);
TRNSIM_FORMAT_SIZE(MatmulMx, 328);
TRNSIM_FORMAT_SIZE(QuantizeMx, 192);
#undef TRNSIM_FORMAT_SIZE
#endif
static_assert(std::variant_size_v<Op> == 19, "an instruction kind was added: give it fields() in isa/program_io.cpp");

// ---- operands -----------------------------------------------------------------------------

void put(BinaryWriter& w, const AccessPattern& a) {
  w.u8(static_cast<uint8_t>(a.space));
  w.u8(static_cast<uint8_t>(a.dtype));
  w.u8(a.ndims);
  w.u8(a.start_partition);
  w.u16(a.partitions);
  w.u32(a.tensor);
  w.i64(a.offset);
  w.i64(a.partition_stride);
  for (const Dim& d : a.dims) { w.i32(d.stride); w.i32(d.count); }
}

void get(BinaryReader& r, AccessPattern& a) {
  a.space = r.enumeration<Space>("access pattern space", 3);
  a.dtype = r.enumeration<DType>("access pattern dtype", static_cast<int>(DType::kCount));
  a.ndims = r.u8("access pattern ndims");
  if (a.ndims > kMaxFreeDims) r.fail("access pattern ndims", fmt::format("{} free dims (at most {})", a.ndims, kMaxFreeDims));
  a.start_partition = r.u8("access pattern start partition");
  a.partitions = r.u16("access pattern partitions");
  a.tensor = r.u32("access pattern tensor");
  a.offset = r.i64("access pattern offset");
  a.partition_stride = r.i64("access pattern partition stride");
  for (Dim& d : a.dims) {
    d.stride = r.i32("access pattern stride");
    d.count = r.i32("access pattern count");
    if (d.count < 0) r.fail("access pattern count", fmt::format("negative count {}", d.count));
  }
}

void put(BinaryWriter& w, const ScalarOperand& s) {
  w.boolean(s.is_tensor);
  w.f32(s.imm);
  put(w, s.ap);
}

void get(BinaryReader& r, ScalarOperand& s) {
  s.is_tensor = r.boolean("scalar operand kind");
  s.imm = r.f32("scalar operand immediate");
  get(r, s.ap);
}

void put(BinaryWriter& w, AluOp op) { w.u8(static_cast<uint8_t>(op)); }
void get(BinaryReader& r, AluOp& op) { op = r.enumeration<AluOp>("ALU op", static_cast<int>(AluOp::kCount)); }
void put(BinaryWriter& w, ActFunc f) { w.u8(static_cast<uint8_t>(f)); }
void get(BinaryReader& r, ActFunc& f) { f = r.enumeration<ActFunc>("activation function", static_cast<int>(ActFunc::kCount)); }
void put(BinaryWriter& w, bool b) { w.boolean(b); }
void get(BinaryReader& r, bool& b) { b = r.boolean("instruction flag"); }
void put(BinaryWriter& w, uint8_t v) { w.u8(v); }
void get(BinaryReader& r, uint8_t& v) { v = r.u8("instruction byte"); }
void put(BinaryWriter& w, int32_t v) { w.i32(v); }
void get(BinaryReader& r, int32_t& v) { v = r.i32("instruction integer"); }
void put(BinaryWriter& w, float v) { w.f32(v); }
void get(BinaryReader& r, float& v) { v = r.f32("instruction immediate"); }
void put(BinaryWriter& w, const std::array<int32_t, kMaxFreeDims>& a) { for (int32_t v : a) w.i32(v); }
void get(BinaryReader& r, std::array<int32_t, kMaxFreeDims>& a) { for (int32_t& v : a) v = r.i32("iota multiplier"); }

// Each instruction kind lists its fields once; `io` is put or get applied to every field, so
// the write and read orders cannot drift apart.
template <typename F> void fields(Matmul& m, F&& io) { io(m.out); io(m.stationary); io(m.moving); io(m.start); io(m.stop); io(m.sparse_stationary); }
template <typename F> void fields(Transpose& m, F&& io) { io(m.out); io(m.in); }
template <typename F> void fields(TensorTensor& m, F&& io) { io(m.out); io(m.in0); io(m.in1); io(m.op); }
template <typename F> void fields(TensorScalar& m, F&& io) { io(m.out); io(m.in); io(m.op0); io(m.s0); io(m.op1); io(m.s1); io(m.reverse0); }
template <typename F> void fields(TensorReduce& m, F&& io) { io(m.out); io(m.in); io(m.op); io(m.axes); io(m.negate); }
template <typename F> void fields(TensorCopy& m, F&& io) { io(m.out); io(m.in); }
template <typename F> void fields(Select& m, F&& io) { io(m.out); io(m.pred); io(m.on_true); io(m.on_false); }
template <typename F> void fields(BnStats& m, F&& io) { io(m.out); io(m.in); }
template <typename F> void fields(BnAggr& m, F&& io) { io(m.out); io(m.in); }
template <typename F> void fields(Memset& m, F&& io) { io(m.out); io(m.value); }
template <typename F> void fields(Activation& m, F&& io) { io(m.out); io(m.in); io(m.func); io(m.scale); io(m.bias); io(m.has_accum); io(m.accum); }
template <typename F> void fields(Iota& m, F&& io) { io(m.out); io(m.base); io(m.partition_multiplier); io(m.free_multiplier); }
template <typename F> void fields(PartitionReduce& m, F&& io) { io(m.out); io(m.in); io(m.op); }
template <typename F> void fields(PartitionBroadcast& m, F&& io) { io(m.out); io(m.in); }
template <typename F> void fields(Gather& m, F&& io) { io(m.out); io(m.in); io(m.index); }
template <typename F> void fields(Dma& m, F&& io) { io(m.dst); io(m.src); io(m.indirect); io(m.index); }
template <typename F> void fields(Nop&, F&&) {}
template <typename F> void fields(MatmulMx& m, F&& io) {
  io(m.out); io(m.stationary); io(m.moving); io(m.stationary_scale); io(m.moving_scale); io(m.start); io(m.stop);
}
template <typename F> void fields(QuantizeMx& m, F&& io) { io(m.out); io(m.out_scale); io(m.in); }

// Op alternatives built by index (the variant index is what the file stores).
template <size_t I = 0>
Op make_op(size_t index) {
  if constexpr (I < std::variant_size_v<Op>) {
    if (index == I) return Op(std::in_place_index<I>);
    return make_op<I + 1>(index);
  } else {
    return Op{};
  }
}

// HBM tensor indices and semaphore ids are checked once the whole program is read.
struct Checks {
  size_t tensors = 0;
  uint32_t semaphores = 0;
};

void check_ap(BinaryReader& r, const AccessPattern& a, const Checks& c) {
  if (a.space == Space::HBM && a.tensor >= c.tensors)
    r.fail("HBM access pattern", fmt::format("tensor index {} but the program has {} tensors", a.tensor, c.tensors));
}

void write_instruction(BinaryWriter& w, const Instruction& ins) {
  w.u8(static_cast<uint8_t>(ins.op.index()));
  std::visit([&](const auto& op) {
    auto& m = const_cast<std::decay_t<decltype(op)>&>(op);  // fields() is shared with reading
    fields(m, [&](const auto& f) { put(w, f); });
  }, ins.op);
  w.u8(ins.sync.num_waits);
  for (int i = 0; i < ins.sync.num_waits; ++i) { w.u32(ins.sync.waits[i].semaphore); w.u32(ins.sync.waits[i].value); }
  w.i32(ins.sync.signal);
}

Instruction read_instruction(BinaryReader& r, const Checks& c) {
  Instruction ins;
  const uint8_t kind = r.u8("instruction kind");
  if (kind >= std::variant_size_v<Op>)
    r.fail("instruction kind", fmt::format("kind {} out of range (< {})", kind, std::variant_size_v<Op>));
  ins.op = make_op(kind);
  std::visit([&](auto& op) {
    fields(op, [&](auto& f) {
      get(r, f);
      if constexpr (std::is_same_v<std::decay_t<decltype(f)>, AccessPattern>) check_ap(r, f, c);
      if constexpr (std::is_same_v<std::decay_t<decltype(f)>, ScalarOperand>) check_ap(r, f.ap, c);
    });
  }, ins.op);
  ins.sync.num_waits = r.u8("sync wait count");
  if (ins.sync.num_waits > Sync::kMaxWaits)
    r.fail("sync wait count", fmt::format("{} waits (at most {})", ins.sync.num_waits, Sync::kMaxWaits));
  for (int i = 0; i < ins.sync.num_waits; ++i) {
    ins.sync.waits[i].semaphore = r.u32("sync wait semaphore");
    ins.sync.waits[i].value = r.u32("sync wait value");
    if (ins.sync.waits[i].semaphore >= c.semaphores)
      r.fail("sync wait semaphore", fmt::format("semaphore {} but the program has {}", ins.sync.waits[i].semaphore, c.semaphores));
  }
  ins.sync.signal = r.i32("sync signal");
  if (ins.sync.signal < -1 || (ins.sync.signal >= 0 && static_cast<uint32_t>(ins.sync.signal) >= c.semaphores))
    r.fail("sync signal", fmt::format("semaphore {} but the program has {}", ins.sync.signal, c.semaphores));
  return ins;
}

void write_stream(BinaryWriter& w, const std::vector<Instruction>& s) {
  w.u64(s.size());
  for (const auto& ins : s) write_instruction(w, ins);
}

std::vector<Instruction> read_stream(BinaryReader& r, const Checks& c) {
  const size_t n = r.count("instruction count", 6);  // kind + wait count + signal at least
  std::vector<Instruction> s;
  s.reserve(n);
  for (size_t i = 0; i < n; ++i) s.push_back(read_instruction(r, c));
  return s;
}

}  // namespace

void write_program(BinaryWriter& w, const Program& p) {
  w.str(p.name);
  w.u32(p.semaphores);
  w.u64(p.tensors.size());
  for (const auto& t : p.tensors) {
    w.str(t.name);
    w.u64(t.shape.size());
    for (int64_t d : t.shape) w.i64(d);
    w.u8(static_cast<uint8_t>(t.dtype));
    w.u8(static_cast<uint8_t>(t.kind));
  }
  w.u64(p.cores.size());
  for (const auto& core : p.cores) {
    for (const auto& s : core.engines) write_stream(w, s);
    w.u64(core.dma_queues.size());
    for (const auto& q : core.dma_queues) write_stream(w, q);
  }
}

Program read_program(BinaryReader& r) {
  Program p;
  p.name = r.str("program name");
  p.semaphores = r.u32("program semaphore count");
  const size_t nt = r.count("program tensor count", 8 + 8 + 2);
  p.tensors.resize(nt);
  for (auto& t : p.tensors) {
    t.name = r.str("HBM tensor name");
    const size_t rank = r.count("HBM tensor rank", 8);
    t.shape.resize(rank);
    for (auto& d : t.shape) {
      d = r.i64("HBM tensor dim");
      if (d < 0) r.fail("HBM tensor dim", fmt::format("negative dim {} of tensor '{}'", d, t.name));
    }
    t.dtype = r.enumeration<DType>("HBM tensor dtype", static_cast<int>(DType::kCount));
    t.kind = r.enumeration<HbmTensor::Kind>("HBM tensor kind", 3);
    try {
      t.bytes();  // checked: a size that overflows int64 is refused here, not wrapped later
    } catch (const ShapeError& e) {
      r.fail("HBM tensor dim", e.what());
    }
  }
  const Checks c{p.tensors.size(), p.semaphores};
  const size_t nc = r.count("program core count", 8 * (kComputeEngines + 1));
  p.cores.resize(nc);
  for (auto& core : p.cores) {
    for (auto& s : core.engines) s = read_stream(r, c);
    const size_t nq = r.count("DMA queue count", 8);
    core.dma_queues.resize(nq);
    for (auto& q : core.dma_queues) q = read_stream(r, c);
  }
  return p;
}

}  // namespace trnsim::isa
