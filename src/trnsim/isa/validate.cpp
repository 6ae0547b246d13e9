// Hardware rules, checked once per instruction before a run (and by the kernel builder at the
// call that appends the instruction), so that bad kernels fail with a message, never a crash.
#include "trnsim/isa/validate.h"

#include <fmt/format.h>

#include "trnsim/common/checked.h"
#include "trnsim/common/error.h"

namespace trnsim::isa {

namespace {

// No real pattern comes near this (an SBUF holds 24 Mi bytes, an HBM tensor is a few GiB).
constexpr int64_t kMaxPatternElements = int64_t{1} << 36;

int64_t checked_elements(const AccessPattern& ap) {
  int64_t n = ap.partitions;
  for (int i = 0; i < ap.ndims; ++i) n = checked_mul(n, ap.dims[i].count, "access pattern size");
  return n;
}

struct Ctx {
  const Instruction& ins;
  Engine engine;
  const hw::ChipSpec& chip;
  const Program& program;
  std::string name() const { return op_name(ins.op); }
  [[noreturn]] void shape(const std::string& msg) const {
    throw ShapeError(fmt::format("{} on {}: {}", name(), engine_name(engine), msg));
  }
  [[noreturn]] void unsupported(const std::string& msg) const {
    throw UnsupportedError(fmt::format("{} on {}: {}", name(), engine_name(engine), msg));
  }
};

void check_ap(const Ctx& c, const AccessPattern& ap, const char* what, bool compute) {
  if (ap.ndims > kMaxFreeDims) c.shape(fmt::format("{} has {} free dims (at most 4)", what, ap.ndims));
  for (int d = 0; d < ap.ndims; ++d)
    if (ap.dims[d].count < 1) c.shape(fmt::format("{} dim {} has count {}", what, d, ap.dims[d].count));
  if (ap.partitions < 1) c.shape(fmt::format("{} has no partitions", what));
  // Bounded before anything iterates over it (a stride-0 pattern of 2^31^4 elements would
  // overflow, or run for ever); then the extent, with checked arithmetic, against its memory.
  if (const int64_t n = checked_elements(ap); n > kMaxPatternElements)
    c.shape(fmt::format("{} has {} elements (at most {})", what, n, kMaxPatternElements));
  auto [lo, hi] = ap.byte_extent();
  if (ap.space == Space::HBM) {
    if (compute) c.unsupported(fmt::format("{} is in HBM; compute engines read SBUF/PSUM only (load it first)", what));
    if (ap.tensor >= c.program.tensors.size())
      c.shape(fmt::format("{} names HBM tensor #{} but the program has {}", what, ap.tensor, c.program.tensors.size()));
    const auto& t = c.program.tensors[ap.tensor];
    if (lo < 0 || hi > t.bytes())
      c.shape(fmt::format("{} reaches bytes [{}, {}) of tensor '{}' which has {} bytes", what, lo, hi, t.name, t.bytes()));
    return;
  }
  if (ap.partitions > kMaxPartitions || ap.start_partition + ap.partitions > kMaxPartitions)
    c.shape(fmt::format("{} spans partitions [{}, {}) but a core has 128", what, ap.start_partition,
                        ap.start_partition + ap.partitions));
  const auto& mem = ap.space == Space::SBUF ? c.chip.core.sbuf : c.chip.core.psum;
  int64_t cap = static_cast<int64_t>(mem.bytes_per_partition.value());
  if (lo < 0 || hi > cap)
    c.shape(fmt::format("{} reaches bytes [{}, {}) of each {} partition, which holds {} bytes", what,
                        lo, hi, space_name(ap.space), cap));
  if (compute) {
    int p = ap.partitions, s = ap.start_partition;
    bool ok = p > 64 ? s == 0 : p > 32 ? (s == 0 || s == 64) : (s % 32 == 0);
    if (!ok)
      c.shape(fmt::format("{} starts at partition {} with {} partitions; engines access P>64 from 0, "
                          "32<P<=64 from 0 or 64, P<=32 from a multiple of 32", what, s, p));
    int64_t limit = ap.space == Space::PSUM ? 4096 : 65536;
    if (ap.free_size() > limit)
      c.shape(fmt::format("{} has {} elements per partition; engines take at most {} from {}", what,
                          ap.free_size(), limit, space_name(ap.space)));
  }
}

void same_shape(const Ctx& c, const AccessPattern& a, const AccessPattern& b, const char* an, const char* bn) {
  if (a.partitions != b.partitions || a.free_size() != b.free_size())
    c.shape(fmt::format("{} is [{}, {}] but {} is [{}, {}]", an, a.partitions, a.free_size(), bn,
                        b.partitions, b.free_size()));
}

void on_engine(const Ctx& c, std::initializer_list<Engine> ok) {
  for (Engine e : ok) if (e == c.engine) return;
  std::string names;
  for (Engine e : ok) names += fmt::format("{}{}", names.empty() ? "" : " or ", engine_name(e));
  c.unsupported(fmt::format("runs on {}", names));
}

void check_scalar(const Ctx& c, const ScalarOperand& s, const AccessPattern& out, const char* what) {
  if (!s.is_tensor) return;
  check_ap(c, s.ap, what, true);
  if (s.ap.partitions != out.partitions)
    c.shape(fmt::format("{} has {} partitions, the output {}", what, s.ap.partitions, out.partitions));
}

// The PE-array rules every matmul shares: operands in SBUF, out in one PSUM bank, K/M/N limits.
template <class MM>
void check_pe_operands(const Ctx& c, const MM& m) {
  const auto& te = c.chip.core.tensor;
  check_ap(c, m.stationary, "stationary", true);
  check_ap(c, m.moving, "moving", true);
  check_ap(c, m.out, "out", true);
  if (m.stationary.space != Space::SBUF || m.moving.space != Space::SBUF)
    c.unsupported("stationary and moving operands must be in SBUF");
  if (m.out.space != Space::PSUM) c.unsupported("the output must be in PSUM");
  int K = m.stationary.partitions;
  if (m.moving.partitions != K)
    c.shape(fmt::format("stationary has K={} partitions but moving has {}", K, m.moving.partitions));
  if (K > te.rows) c.shape(fmt::format("contraction K={} > {} (PE array rows)", K, te.rows));
  int64_t M = m.stationary.free_size(), N = m.moving.free_size();
  if (M > te.cols) c.shape(fmt::format("stationary free size M={} > {} (PE array columns)", M, te.cols));
  int bank_elems = kPsumBankBytes / m.out.element_bytes();
  int64_t nmax = std::min<int64_t>(te.max_moving_free, bank_elems);
  if (N > nmax)
    c.shape(fmt::format("moving free size N={} > {} ({} in one 2 KiB PSUM bank)", N, nmax,
                        numerics::name(m.out.dtype)));
  if (m.out.partitions != M || m.out.free_size() != N)
    c.shape(fmt::format("output is [{}, {}] but stationary^T @ moving is [{}, {}]", m.out.partitions,
                        m.out.free_size(), M, N));
  auto [lo, hi] = m.out.byte_extent();
  if (lo / kPsumBankBytes != (hi - 1) / kPsumBankBytes)
    c.shape(fmt::format("output bytes [{}, {}) cross a 2 KiB PSUM bank boundary", lo, hi));
  if (m.out.dtype != DType::F32 && m.out.dtype != DType::BF16)
    c.unsupported(fmt::format("PSUM accumulates in fp32 (or bf16), not {}", numerics::name(m.out.dtype)));
}

void check_matmul(const Ctx& c, const Matmul& m) {
  const auto& te = c.chip.core.tensor;
  check_pe_operands(c, m);
  const int K = m.stationary.partitions;
  for (auto* ap : {&m.stationary, &m.moving})
    if (!te.dtype_rate.count(ap->dtype))
      c.unsupported(fmt::format("{}'s TensorE does not take {} operands", c.chip.name, numerics::name(ap->dtype)));
  if (m.sparse_stationary) {
    if (!te.sparse_4_16)
      c.unsupported(fmt::format("{} has no 4:16 structured sparsity on TensorE", c.chip.name));
    if (K % 16) c.shape(fmt::format("a 4:16 sparse stationary needs K a multiple of 16, got {}", K));
  }
}

// An MX operand: element codes of a format the chip's TensorE takes at the MX rate, and an E8M0
// scale tile in SBUF with one row per 32 partitions of the operand and its free size.
void check_mx_operand(const Ctx& c, const AccessPattern& elems, const AccessPattern& scale, const char* what) {
  const auto mx = mx_block_dtype(elems.dtype);
  if (!mx)
    c.unsupported(fmt::format("{} elements are {}; MX elements are fp8_e4m3, fp8_e5m2 or fp4_e2m1", what, numerics::name(elems.dtype)));
  if (!c.chip.core.tensor.dtype_rate.count(*mx))
    c.unsupported(fmt::format("{} has no MX matmul (its TensorE does not take {}; Trainium3 does, e.g. trn3)", c.chip.name, numerics::name(*mx)));
  const std::string sw = std::string(what) + "_scale";
  check_ap(c, scale, sw.c_str(), true);
  if (scale.space != Space::SBUF) c.unsupported(fmt::format("{} must be in SBUF", sw));
  if (scale.dtype != DType::E8M0) c.unsupported(fmt::format("{} is {}, MX scales are e8m0", sw, numerics::name(scale.dtype)));
  const int blocks = (elems.partitions + 31) / 32;
  if (scale.partitions != blocks || scale.free_size() != elems.free_size())
    c.shape(fmt::format("{} is [{}, {}] but {} [{}, {}] needs [{}, {}] (one scale per 32 partitions of each column)", sw,
                        scale.partitions, scale.free_size(), what, elems.partitions, elems.free_size(), blocks, elems.free_size()));
}

void check_quantize_mx(const Ctx& c, const QuantizeMx& q) {
  on_engine(c, {Engine::Vector});
  check_ap(c, q.in, "in", true);
  check_ap(c, q.out, "out", true);
  same_shape(c, q.out, q.in, "out", "in");
  if (q.out.space != Space::SBUF) c.unsupported("out must be in SBUF (the MX matmul reads it)");
  check_mx_operand(c, q.out, q.out_scale, "out");
}

void check(const Ctx& c) {
  const Op& op = c.ins.op;
  if (auto* m = std::get_if<MatmulMx>(&op)) {
    on_engine(c, {Engine::Tensor});
    check_pe_operands(c, *m);
    check_mx_operand(c, m->stationary, m->stationary_scale, "stationary");
    check_mx_operand(c, m->moving, m->moving_scale, "moving");
    return;
  }
  if (auto* q = std::get_if<QuantizeMx>(&op)) return check_quantize_mx(c, *q);
  if (auto* m = std::get_if<Matmul>(&op)) { on_engine(c, {Engine::Tensor}); return check_matmul(c, *m); }
  if (auto* t = std::get_if<Transpose>(&op)) {
    on_engine(c, {Engine::Tensor});
    check_ap(c, t->in, "in", true);
    check_ap(c, t->out, "out", true);
    if (t->out.space != Space::PSUM) c.unsupported("the output must be in PSUM");
    if (t->in.free_size() > c.chip.core.tensor.cols)
      c.shape(fmt::format("input free size {} > {}", t->in.free_size(), c.chip.core.tensor.cols));
    if (t->out.partitions != t->in.free_size() || t->out.free_size() != t->in.partitions)
      c.shape("output must be the input's shape transposed");
    return;
  }
  if (auto* d = std::get_if<Dma>(&op)) {
    on_engine(c, {Engine::Dma});
    check_ap(c, d->src, "src", false);
    check_ap(c, d->dst, "dst", false);
    if (d->dst.space == Space::PSUM) c.unsupported("DMA cannot write PSUM");
    if (d->indirect) {
      check_ap(c, d->index, "index", true);
      if (d->index.space != Space::SBUF) c.unsupported("an indirect DMA reads its index from SBUF");
      if (d->index.partitions != d->dst.partitions || d->index.free_size() != 1)
        c.shape(fmt::format("index must hold one value per dst partition ({}), got [{}, {}]", d->dst.partitions,
                            d->index.partitions, d->index.free_size()));
      if (d->src.space != Space::HBM || d->src.partitions != 1 || d->src.ndims < 2)
        c.shape("an indirect DMA's src is an HBM table [1, rows, ...] (its outermost free dim is the row)");
      const int64_t row = d->src.free_size() / std::max(1, d->src.dims[0].count);
      if (row != d->dst.free_size())
        c.shape(fmt::format("a table row has {} elements, a dst partition {}", row, d->dst.free_size()));
      return;
    }
    if (d->src.elements() != d->dst.elements())
      c.shape(fmt::format("src has {} elements, dst {}", d->src.elements(), d->dst.elements()));
    return;
  }
  if (std::holds_alternative<Nop>(op)) return;
  if (c.engine == Engine::Tensor || c.engine == Engine::Dma) c.unsupported("not a TensorE/DMA instruction");
  if (auto* a = std::get_if<Activation>(&op)) {
    on_engine(c, {Engine::Scalar});
    check_ap(c, a->in, "in", true);
    check_ap(c, a->out, "out", true);
    same_shape(c, a->out, a->in, "out", "in");
    check_scalar(c, a->scale, a->out, "scale");
    check_scalar(c, a->bias, a->out, "bias");
    if (a->has_accum) check_ap(c, a->accum, "accum", true);
    return;
  }
  // Every other op: its APs are engine-side, and outputs are not in HBM.
  std::visit([&](const auto& o) {
    if constexpr (requires { o.out; }) check_ap(c, o.out, "out", true);
    if constexpr (requires { o.in; }) check_ap(c, o.in, "in", true);
    if constexpr (requires { o.in0; }) { check_ap(c, o.in0, "in0", true); check_ap(c, o.in1, "in1", true); }
  }, op);
  if (auto* o = std::get_if<TensorTensor>(&op)) {
    on_engine(c, {Engine::Vector, Engine::GpSimd});
    same_shape(c, o->out, o->in0, "out", "in0");
    same_shape(c, o->out, o->in1, "out", "in1");
  } else if (auto* o = std::get_if<TensorScalar>(&op)) {
    on_engine(c, {Engine::Vector, Engine::GpSimd, Engine::Scalar});
    same_shape(c, o->out, o->in, "out", "in");
    check_scalar(c, o->s0, o->out, "scalar0");
    check_scalar(c, o->s1, o->out, "scalar1");
  } else if (auto* o = std::get_if<TensorCopy>(&op)) {
    on_engine(c, {Engine::Vector, Engine::GpSimd, Engine::Scalar});
    same_shape(c, o->out, o->in, "out", "in");
  } else if (auto* o = std::get_if<TensorReduce>(&op)) {
    on_engine(c, {Engine::Vector, Engine::GpSimd});
    if (o->axes < 1 || o->axes > o->in.ndims)
      c.shape(fmt::format("reduces {} axes of an input with {} free dims", o->axes, o->in.ndims));
    int64_t inner = 1;
    for (int d = o->in.ndims - o->axes; d < o->in.ndims; ++d) inner *= o->in.dims[d].count;
    if (o->out.partitions != o->in.partitions || o->out.free_size() * inner != o->in.free_size())
      c.shape(fmt::format("output [{}, {}] does not match input [{}, {}] reduced over {} elements",
                          o->out.partitions, o->out.free_size(), o->in.partitions, o->in.free_size(), inner));
  } else if (auto* o = std::get_if<Select>(&op)) {
    on_engine(c, {Engine::Vector, Engine::GpSimd});
    for (auto* ap : {&o->pred, &o->on_true, &o->on_false}) {
      check_ap(c, *ap, "operand", true);
      same_shape(c, o->out, *ap, "out", "operand");
    }
  } else if (auto* o = std::get_if<BnStats>(&op)) {
    on_engine(c, {Engine::Vector});
    if (o->out.free_size() != 3 || o->out.partitions != o->in.partitions)
      c.shape("output must be [P, 3] (count, mean, var)");
  } else if (auto* o = std::get_if<BnAggr>(&op)) {
    on_engine(c, {Engine::Vector});
    if (o->in.free_size() % 3 || o->out.free_size() != 2 || o->out.partitions != o->in.partitions)
      c.shape("input must be [P, 3k] bn_stats triples and output [P, 2] (mean, var)");
  } else if (std::holds_alternative<Memset>(op)) {
    on_engine(c, {Engine::Vector, Engine::GpSimd});
  } else if (std::holds_alternative<Iota>(op)) {
    on_engine(c, {Engine::GpSimd});
  } else if (auto* o = std::get_if<PartitionReduce>(&op)) {
    on_engine(c, {Engine::GpSimd});
    if (o->out.partitions != 1 || o->out.free_size() != o->in.free_size())
      c.shape("output must be [1, F] for an input [P, F]");
  } else if (auto* o = std::get_if<PartitionBroadcast>(&op)) {
    on_engine(c, {Engine::GpSimd});
    if (o->in.partitions != 1 || o->out.free_size() != o->in.free_size())
      c.shape("input must be [1, F] and output [P, F]");
  } else if (auto* o = std::get_if<Gather>(&op)) {
    on_engine(c, {Engine::GpSimd});
    check_ap(c, o->index, "index", true);
    same_shape(c, o->out, o->index, "out", "index");
    if (o->in.partitions != o->out.partitions) c.shape("input and output partitions differ");
  }
}

}  // namespace

void validate(const Instruction& ins, Engine engine, const hw::ChipSpec& chip, const Program& program) {
  check(Ctx{ins, engine, chip, program});
}

void validate(const Program& program, const hw::ChipSpec& chip) {
  if (static_cast<int>(program.cores.size()) > chip.neuron_cores)
    throw ShapeError(fmt::format("program '{}' uses {} cores but {} has {}", program.name,
                                 program.cores.size(), chip.name, chip.neuron_cores));
  auto check_stream = [&](const std::vector<Instruction>& s, UnitId u) {
    for (size_t i = 0; i < s.size(); ++i) {
      const auto& ins = s[i];
      try {
        validate(ins, u.engine, chip, program);
        for (int w = 0; w < ins.sync.num_waits; ++w)
          if (ins.sync.waits[w].semaphore >= program.semaphores)
            throw ShapeError(fmt::format("waits on semaphore {} of {}", ins.sync.waits[w].semaphore, program.semaphores));
        if (ins.sync.signal >= static_cast<int64_t>(program.semaphores))
          throw ShapeError(fmt::format("signals semaphore {} of {}", ins.sync.signal, program.semaphores));
      } catch (const ShapeError& e) {
        throw ShapeError(fmt::format("{} instruction #{}: {}", u.name(), i, e.what()));
      } catch (const UnsupportedError& e) {
        throw UnsupportedError(fmt::format("{} instruction #{}: {}", u.name(), i, e.what()));
      }
    }
  };
  for (size_t c = 0; c < program.cores.size(); ++c) {
    const auto& cp = program.cores[c];
    for (int e = 0; e < kComputeEngines; ++e)
      check_stream(cp.engines[e], UnitId{static_cast<uint16_t>(c), static_cast<Engine>(e), 0});
    for (size_t q = 0; q < cp.dma_queues.size(); ++q)
      check_stream(cp.dma_queues[q], UnitId{static_cast<uint16_t>(c), Engine::Dma, static_cast<uint16_t>(q)});
  }
}

}  // namespace trnsim::isa
