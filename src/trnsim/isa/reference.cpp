// Plain-loop reference semantics of every instruction. Slow on purpose: one element at a time,
// straight from the definitions in instruction.h.
#include "trnsim/isa/reference.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "trnsim/common/error.h"

namespace trnsim::isa {

namespace {

float scalar_of(const ScalarOperand& s, const ElementMemory& m, int p) {
  return s.is_tensor ? m.load(s.ap, p, 0) : s.imm;
}

// Index of free position i along dim d of ap.
int64_t dim_index(const AccessPattern& ap, int64_t i, int d) {
  for (int e = ap.ndims - 1; e > d; --e) i /= ap.dims[e].count;
  return i % ap.dims[d].count;
}

void ref_matmul(const Matmul& mm, ElementMemory& mem) {
  const int K = mm.moving.partitions;
  const int64_t M = mm.stationary.free_size(), N = mm.moving.free_size();
  std::vector<double> w(static_cast<size_t>(K) * M);
  for (int k = 0; k < K; ++k)
    for (int64_t m = 0; m < M; ++m) w[k * M + m] = mem.load(mm.stationary, k, m);
  if (mm.sparse_stationary) {  // keep the 4 largest |w| of every 16 along K, per column
    for (int64_t m = 0; m < M; ++m)
      for (int g = 0; g + 16 <= K; g += 16) {
        int idx[16];
        for (int j = 0; j < 16; ++j) idx[j] = g + j;
        std::stable_sort(idx, idx + 16, [&](int a, int b) {
          return std::fabs(w[a * M + m]) > std::fabs(w[b * M + m]);
        });
        for (int j = 4; j < 16; ++j) w[idx[j] * M + m] = 0.0;
      }
  }
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = mm.start ? 0.0 : mem.load(mm.out, static_cast<int>(m), n);
      for (int k = 0; k < K; ++k) acc += w[k * M + m] * static_cast<double>(mem.load(mm.moving, k, n));
      mem.store(mm.out, static_cast<int>(m), n, static_cast<float>(acc));
    }
}

// MX operands as doubles: element times the E8M0 scale of its block of 32 partitions.
std::vector<double> mx_values(const AccessPattern& e, const AccessPattern& s, const ElementMemory& mem) {
  const int64_t F = e.free_size();
  std::vector<double> v(static_cast<size_t>(e.partitions * F));
  for (int k = 0; k < e.partitions; ++k)
    for (int64_t f = 0; f < F; ++f) v[k * F + f] = double(mem.load(e, k, f)) * double(mem.load(s, k / 32, f));
  return v;
}

void ref_matmul_mx(const MatmulMx& mm, ElementMemory& mem) {
  const int K = mm.moving.partitions;
  const int64_t M = mm.stationary.free_size(), N = mm.moving.free_size();
  const std::vector<double> w = mx_values(mm.stationary, mm.stationary_scale, mem);
  const std::vector<double> x = mx_values(mm.moving, mm.moving_scale, mem);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = mm.start ? 0.0 : mem.load(mm.out, static_cast<int>(m), n);
      for (int k = 0; k < K; ++k) acc += w[k * M + m] * x[k * N + n];
      mem.store(mm.out, static_cast<int>(m), n, static_cast<float>(acc));
    }
}

// OCP MX v1.0 straight from the definition: shared exponent floor(log2(amax)) - emax(element)
// (-127 for a block of zeros or fp32 subnormals), elements x / 2^shared saturated to the
// element's max and rounded by the store; a block holding NaN or Inf gets the NaN scale.
void ref_quantize_mx(const QuantizeMx& q, ElementMemory& mem) {
  const auto& el = numerics::info(q.out.dtype);
  const int emax = std::ilogb(el.max_finite);
  const int64_t F = q.in.free_size();
  for (int b = 0; b * 32 < q.in.partitions; ++b) {
    const int p1 = std::min<int>(q.in.partitions, (b + 1) * 32);
    for (int64_t f = 0; f < F; ++f) {
      double amax = 0;
      bool special = false;
      for (int p = b * 32; p < p1; ++p) {
        const double x = mem.load(q.in, p, f);
        special = special || !std::isfinite(x);
        amax = std::max(amax, std::fabs(x));
      }
      const int shared = amax < 0x1p-126 ? -127 : std::max(std::ilogb(amax) - emax, -127);
      mem.store(q.out_scale, b, f, special ? NAN : static_cast<float>(std::ldexp(1.0, shared)));
      for (int p = b * 32; p < p1; ++p) {
        const double v = std::clamp(std::ldexp(double(mem.load(q.in, p, f)), -shared), -el.max_finite, el.max_finite);
        mem.store(q.out, p, f, special ? 0.0f : static_cast<float>(v));
      }
    }
  }
}

}  // namespace

void reference_execute(const Op& op, ElementMemory& mem) {
  if (auto* o = std::get_if<Matmul>(&op)) return ref_matmul(*o, mem);
  if (auto* o = std::get_if<MatmulMx>(&op)) return ref_matmul_mx(*o, mem);
  if (auto* o = std::get_if<QuantizeMx>(&op)) return ref_quantize_mx(*o, mem);
  if (auto* o = std::get_if<Transpose>(&op)) {
    for (int p = 0; p < o->in.partitions; ++p)
      for (int64_t f = 0; f < o->in.free_size(); ++f)
        mem.store(o->out, static_cast<int>(f), p, mem.load(o->in, p, f));
    return;
  }
  if (auto* o = std::get_if<TensorTensor>(&op)) {
    for (int p = 0; p < o->out.partitions; ++p)
      for (int64_t i = 0; i < o->out.free_size(); ++i)
        mem.store(o->out, p, i, alu_apply(o->op, mem.load(o->in0, p, i), mem.load(o->in1, p, i)));
    return;
  }
  if (auto* o = std::get_if<TensorScalar>(&op)) {
    for (int p = 0; p < o->out.partitions; ++p) {
      float s0 = scalar_of(o->s0, mem, p), s1 = scalar_of(o->s1, mem, p);
      for (int64_t i = 0; i < o->out.free_size(); ++i) {
        float x = mem.load(o->in, p, i);
        float v = o->reverse0 ? alu_apply(o->op0, s0, x) : alu_apply(o->op0, x, s0);
        mem.store(o->out, p, i, alu_apply(o->op1, v, s1));
      }
    }
    return;
  }
  if (auto* o = std::get_if<TensorReduce>(&op)) {
    int64_t inner = 1;
    for (int d = o->in.ndims - o->axes; d < o->in.ndims; ++d) inner *= o->in.dims[d].count;
    int64_t outer = o->in.free_size() / inner;
    for (int p = 0; p < o->in.partitions; ++p)
      for (int64_t j = 0; j < outer; ++j) {
        float acc = alu_identity(o->op);
        for (int64_t r = 0; r < inner; ++r) acc = alu_apply(o->op, acc, mem.load(o->in, p, j * inner + r));
        mem.store(o->out, p, j, o->negate ? -acc : acc);
      }
    return;
  }
  if (auto* o = std::get_if<TensorCopy>(&op)) {
    for (int p = 0; p < o->out.partitions; ++p)
      for (int64_t i = 0; i < o->out.free_size(); ++i) mem.store(o->out, p, i, mem.load(o->in, p, i));
    return;
  }
  if (auto* o = std::get_if<Select>(&op)) {
    for (int p = 0; p < o->out.partitions; ++p)
      for (int64_t i = 0; i < o->out.free_size(); ++i)
        mem.store(o->out, p, i,
                  mem.load(o->pred, p, i) != 0.0f ? mem.load(o->on_true, p, i) : mem.load(o->on_false, p, i));
    return;
  }
  if (auto* o = std::get_if<BnStats>(&op)) {
    for (int p = 0; p < o->in.partitions; ++p) {
      double s = 0, s2 = 0;
      int64_t n = o->in.free_size();
      for (int64_t i = 0; i < n; ++i) s += mem.load(o->in, p, i);
      double mean = s / n;
      for (int64_t i = 0; i < n; ++i) { double d = mem.load(o->in, p, i) - mean; s2 += d * d; }
      mem.store(o->out, p, 0, static_cast<float>(n));
      mem.store(o->out, p, 1, static_cast<float>(mean));
      mem.store(o->out, p, 2, static_cast<float>(s2 / n));
    }
    return;
  }
  if (auto* o = std::get_if<BnAggr>(&op)) {
    int64_t k = o->in.free_size() / 3;
    for (int p = 0; p < o->in.partitions; ++p) {
      double n = 0, sum = 0;
      for (int64_t j = 0; j < k; ++j) {
        double c = mem.load(o->in, p, 3 * j);
        n += c;
        sum += c * mem.load(o->in, p, 3 * j + 1);
      }
      double mean = n > 0 ? sum / n : 0.0, m2 = 0;
      for (int64_t j = 0; j < k; ++j) {
        double c = mem.load(o->in, p, 3 * j), mu = mem.load(o->in, p, 3 * j + 1);
        m2 += c * (mem.load(o->in, p, 3 * j + 2) + (mu - mean) * (mu - mean));
      }
      mem.store(o->out, p, 0, static_cast<float>(mean));
      mem.store(o->out, p, 1, static_cast<float>(n > 0 ? m2 / n : 0.0));
    }
    return;
  }
  if (auto* o = std::get_if<Memset>(&op)) {
    for (int p = 0; p < o->out.partitions; ++p)
      for (int64_t i = 0; i < o->out.free_size(); ++i) mem.store(o->out, p, i, o->value);
    return;
  }
  if (auto* o = std::get_if<Activation>(&op)) {
    for (int p = 0; p < o->out.partitions; ++p) {
      float sc = scalar_of(o->scale, mem, p), b = scalar_of(o->bias, mem, p);
      double acc = 0;
      for (int64_t i = 0; i < o->out.free_size(); ++i) {
        mem.store(o->out, p, i, act_apply(o->func, mem.load(o->in, p, i) * sc + b));
        acc += mem.load(o->out, p, i);
      }
      if (o->has_accum) mem.store(o->accum, p, 0, static_cast<float>(acc));
    }
    return;
  }
  if (auto* o = std::get_if<Iota>(&op)) {
    for (int p = 0; p < o->out.partitions; ++p)
      for (int64_t i = 0; i < o->out.free_size(); ++i) {
        int64_t v = o->base + static_cast<int64_t>(o->partition_multiplier) * p;
        for (int d = 0; d < o->out.ndims; ++d) v += o->free_multiplier[d] * dim_index(o->out, i, d);
        mem.store(o->out, p, i, static_cast<float>(v));
      }
    return;
  }
  if (auto* o = std::get_if<PartitionReduce>(&op)) {
    for (int64_t i = 0; i < o->in.free_size(); ++i) {
      float acc = alu_identity(o->op);
      for (int p = 0; p < o->in.partitions; ++p) acc = alu_apply(o->op, acc, mem.load(o->in, p, i));
      mem.store(o->out, 0, i, acc);
    }
    return;
  }
  if (auto* o = std::get_if<PartitionBroadcast>(&op)) {
    for (int p = 0; p < o->out.partitions; ++p)
      for (int64_t i = 0; i < o->out.free_size(); ++i) mem.store(o->out, p, i, mem.load(o->in, 0, i));
    return;
  }
  if (auto* o = std::get_if<Gather>(&op)) {
    int64_t n = o->in.free_size();
    for (int p = 0; p < o->out.partitions; ++p)
      for (int64_t j = 0; j < o->out.free_size(); ++j) {
        float fi = mem.load(o->index, p, j);
        int64_t idx = static_cast<int64_t>(fi);
        mem.store(o->out, p, j, (fi >= 0 && idx < n) ? mem.load(o->in, p, idx) : NAN);
      }
    return;
  }
  if (auto* o = std::get_if<Dma>(&op); o && o->indirect) {
    for (int p = 0; p < o->dst.partitions; ++p) {
      const AccessPattern row = gathered_row(*o, checked_row(*o, mem.load(o->index, p, 0), p));
      for (int64_t j = 0; j < o->dst.free_size(); ++j) mem.store(o->dst, p, j, mem.load(row, 0, j));
    }
    return;
  }
  if (auto* o = std::get_if<Dma>(&op)) {
    // Both sides walked in row-major (partition, free) order; shapes may differ, counts match.
    int64_t fs = o->src.free_size(), fd = o->dst.free_size(), n = o->src.elements();
    for (int64_t e = 0; e < n; ++e)
      mem.store(o->dst, static_cast<int>(e / fd), e % fd,
                mem.load(o->src, static_cast<int>(e / fs), e % fs));
    return;
  }
  // Nop: nothing.
}

}  // namespace trnsim::isa
