#include "trnsim/core/vector_engine.h"

#include <algorithm>

#include "trnsim/core/chip.h"
#include "trnsim/core/gpsimd_engine.h"
#include "trnsim/core/neuron_core.h"
#include "trnsim/core/scalar_engine.h"
#include "trnsim/numerics/convert.h"

namespace trnsim::core {

using isa::AccessPattern;
using isa::AluOp;
using numerics::DType;
using sim::Time;

namespace {

bool is16(DType t) { return t == DType::BF16 || t == DType::F16; }
bool narrow(DType t) { return numerics::info(t).bits <= 16; }

// Elements per partition per cycle relative to one (128 lanes at 1/cycle).
double width(const hw::EngineSpec& e, std::initializer_list<const AccessPattern*> aps) {
  bool all_narrow = true;
  for (auto* a : aps) all_narrow = all_narrow && narrow(a->dtype);
  double epc = all_narrow ? e.elems_per_cycle_16bit : e.elems_per_cycle_other;
  return std::max(1.0, epc / std::max(1, e.lanes));
}

bool wide_stride(const AccessPattern& a) {
  // int64: a loaded program's stride may be any int32 (x 4 bytes overflowed int; fuzz, tpg)
  return a.ndims > 0 && std::abs(static_cast<int64_t>(a.dims[a.ndims - 1].stride)) * a.element_bytes() > 16 &&
         a.dims[a.ndims - 1].count > 1;
}

}  // namespace

double vector_cycles(const isa::Op& op, const hw::EngineSpec& e) {
  const double min_ii = e.fixed_overhead_cycles;
  auto N = [&](const AccessPattern& a, std::initializer_list<const AccessPattern*> aps) {
    double n = static_cast<double>(a.free_size()) / width(e, aps);
    for (auto* x : aps) if (wide_stride(*x)) { n *= 2; break; }
    return n;
  };
  if (auto* o = std::get_if<isa::TensorTensor>(&op)) {
    double n = N(o->out, {&o->out, &o->in0, &o->in1});
    if (o->op == AluOp::Div) return std::max(min_ii, 8 * n);
    bool fast16 = is16(o->in0.dtype) && is16(o->in1.dtype) && o->in0.contiguous() && o->in1.contiguous() &&
                  (o->op == AluOp::Add || o->op == AluOp::Sub || o->op == AluOp::Mul);
    bool psum_sbuf = (o->in0.space == isa::Space::PSUM) != (o->in1.space == isa::Space::PSUM);
    return std::max(min_ii, (fast16 || psum_sbuf) ? n : 2 * n);
  }
  if (auto* o = std::get_if<isa::TensorScalar>(&op)) {
    double n = N(o->out, {&o->out, &o->in});
    bool div = o->op0 == AluOp::Div || o->op1 == AluOp::Div;
    return std::max(min_ii, div ? 8 * n : n);
  }
  if (auto* o = std::get_if<isa::TensorReduce>(&op)) {
    double n = N(o->in, {&o->in});
    bool half = o->in.dtype == DType::BF16 && (o->op == AluOp::Add || o->op == AluOp::Max);
    return std::max(min_ii, half ? n / 2 : n);
  }
  if (auto* o = std::get_if<isa::TensorCopy>(&op)) return std::max(min_ii, N(o->out, {&o->out, &o->in}));
  if (auto* o = std::get_if<isa::Select>(&op))
    return std::max(min_ii, N(o->out, {&o->out, &o->pred, &o->on_true, &o->on_false}));
  if (auto* o = std::get_if<isa::BnStats>(&op)) return std::max(min_ii, N(o->in, {&o->in}));
  if (auto* o = std::get_if<isa::BnAggr>(&op)) return std::max(min_ii, 13.0 * N(o->in, {&o->in}) / 3.0);
  if (auto* o = std::get_if<isa::Memset>(&op)) {
    double n = N(o->out, {&o->out});
    return std::max(min_ii, (o->value == 0.0f && is16(o->out.dtype)) ? n / 2 : n);
  }
  // QuantizeMX: estimate (no published cost): a max pass for the block scales and a scale-and-
  // convert pass at the element rate.
  if (auto* o = std::get_if<isa::QuantizeMx>(&op)) return std::max(min_ii, 2 * N(o->in, {&o->in, &o->out}));
  if (auto* o = std::get_if<isa::Activation>(&op)) {
    double n = std::max(min_ii, N(o->out, {&o->out, &o->in}));
    return o->has_accum ? n + min_ii : n;
  }
  return min_ii;  // Nop and anything issued only for its semaphores
}

namespace {
// Blocks of 32 partitions per column through numerics::mx_quantize; the tiles receive the
// decoded element values and scales (each exact in its tile dtype).
void execute_quantize_mx(const isa::QuantizeMx& q, NeuronCore& core) {
  const DType mx = *isa::mx_block_dtype(q.out.dtype);
  const int P = q.in.partitions;
  const int64_t F = q.in.free_size();
  const float* in = core.read(q.in, 0);
  float* out = core.scratch(static_cast<size_t>(P * F), 1);
  float* scales = core.scratch(static_cast<size_t>((P + 31) / 32 * F), 2);
  float col[32], vals[32];
  uint8_t codes[32], scale = 0;
  for (int b = 0; b * 32 < P; ++b) {
    const int n = std::min(32, P - b * 32);
    for (int64_t f = 0; f < F; ++f) {
      for (int i = 0; i < n; ++i) col[i] = in[(b * 32 + i) * F + f];
      numerics::mx_quantize({col, size_t(n)}, mx, {codes, size_t(n)}, {&scale, 1});
      numerics::decode(std::span<const uint8_t>(codes, size_t(n)), q.out.dtype, {vals, size_t(n)});
      for (int i = 0; i < n; ++i) out[(b * 32 + i) * F + f] = vals[i];
      scales[b * F + f] = numerics::decode(scale, DType::E8M0);
    }
  }
  core.write(q.out, out);
  core.write(q.out_scale, scales);
}
}  // namespace

void execute_engine_op(const isa::Op& op, NeuronCore& core) {
  if (auto* q = std::get_if<isa::QuantizeMx>(&op)) return execute_quantize_mx(*q, core);
  auto elementwise = [&](const AccessPattern& out, auto&& f) {
    const int64_t F = out.free_size();
    float* r = core.scratch(static_cast<size_t>(out.elements()), 3);
    for (int p = 0; p < out.partitions; ++p)
      for (int64_t i = 0; i < F; ++i) r[p * F + i] = f(p, p * F + i);
    core.write(out, r);
  };
  if (auto* o = std::get_if<isa::TensorTensor>(&op)) {
    float* a = core.read(o->in0, 0);
    float* b = core.read(o->in1, 1);
    elementwise(o->out, [&](int, int64_t k) { return isa::alu_apply(o->op, a[k], b[k]); });
  } else if (auto* o = std::get_if<isa::TensorScalar>(&op)) {
    float* a = core.read(o->in, 0);
    int cur = -1;
    float s0 = 0, s1 = 0;
    elementwise(o->out, [&](int p, int64_t k) {
      if (p != cur) { cur = p; s0 = core.scalar(o->s0, p); s1 = core.scalar(o->s1, p); }
      float v = o->reverse0 ? isa::alu_apply(o->op0, s0, a[k]) : isa::alu_apply(o->op0, a[k], s0);
      return isa::alu_apply(o->op1, v, s1);
    });
  } else if (auto* o = std::get_if<isa::TensorReduce>(&op)) {
    float* a = core.read(o->in, 0);
    int64_t inner = 1;
    for (int d = o->in.ndims - o->axes; d < o->in.ndims; ++d) inner *= o->in.dims[d].count;
    const int64_t Fo = o->out.free_size();
    std::vector<float> r(static_cast<size_t>(o->out.partitions) * Fo);
    for (int p = 0; p < o->in.partitions; ++p)
      for (int64_t j = 0; j < Fo; ++j) {
        const float* src = a + (p * Fo + j) * inner;
        float acc = isa::alu_identity(o->op);
        for (int64_t q = 0; q < inner; ++q) acc = isa::alu_apply(o->op, acc, src[q]);
        r[p * Fo + j] = o->negate ? -acc : acc;
      }
    core.write(o->out, r.data());
  } else if (auto* o = std::get_if<isa::TensorCopy>(&op)) {
    core.write(o->out, core.read(o->in, 0));
  } else if (auto* o = std::get_if<isa::Select>(&op)) {
    float* c = core.read(o->pred, 0);
    float* t = core.read(o->on_true, 1);
    float* f = core.read(o->on_false, 2);
    elementwise(o->out, [&](int, int64_t k) { return c[k] != 0.0f ? t[k] : f[k]; });
  } else if (auto* o = std::get_if<isa::BnStats>(&op)) {
    float* a = core.read(o->in, 0);
    const int64_t n = o->in.free_size();
    std::vector<float> r(static_cast<size_t>(o->in.partitions) * 3);
    for (int p = 0; p < o->in.partitions; ++p) {
      double s = 0, s2 = 0;
      for (int64_t i = 0; i < n; ++i) s += a[p * n + i];
      double mean = s / n;
      for (int64_t i = 0; i < n; ++i) { double d = a[p * n + i] - mean; s2 += d * d; }
      r[p * 3] = static_cast<float>(n);
      r[p * 3 + 1] = static_cast<float>(mean);
      r[p * 3 + 2] = static_cast<float>(s2 / n);
    }
    core.write(o->out, r.data());
  } else if (auto* o = std::get_if<isa::BnAggr>(&op)) {
    float* a = core.read(o->in, 0);
    const int64_t F = o->in.free_size(), k = F / 3;
    std::vector<float> r(static_cast<size_t>(o->in.partitions) * 2);
    for (int p = 0; p < o->in.partitions; ++p) {
      const float* t = a + p * F;
      double n = 0, sum = 0, m2 = 0;
      for (int64_t j = 0; j < k; ++j) { n += t[3 * j]; sum += double(t[3 * j]) * t[3 * j + 1]; }
      double mean = n > 0 ? sum / n : 0.0;
      for (int64_t j = 0; j < k; ++j) {
        double d = t[3 * j + 1] - mean;
        m2 += t[3 * j] * (t[3 * j + 2] + d * d);
      }
      r[p * 2] = static_cast<float>(mean);
      r[p * 2 + 1] = static_cast<float>(n > 0 ? m2 / n : 0.0);
    }
    core.write(o->out, r.data());
  } else if (auto* o = std::get_if<isa::Memset>(&op)) {
    elementwise(o->out, [&](int, int64_t) { return o->value; });
  } else if (auto* o = std::get_if<isa::Activation>(&op)) {
    execute_activation(*o, core);
  } else {
    execute_gpsimd_op(op, core);
  }
}

Time VectorEngine::begin(const isa::Instruction& ins, Time t) {
  const auto& spec = core_.spec().vector;
  if (chip_.functional()) execute_engine_op(ins.op, core_);
  return t + Time::cycles(vector_cycles(ins.op, spec), spec.clock, "a VectorE instruction (its cycles over core.vector.clock)");
}

}  // namespace trnsim::core
