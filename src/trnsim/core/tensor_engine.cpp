#include "trnsim/core/tensor_engine.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "trnsim/core/buffer_pool.h"
#include "trnsim/core/chip.h"
#include "trnsim/core/neuron_core.h"
#include "trnsim/core/pe_array_gemm.h"

namespace trnsim::core {

using isa::AccessPattern;
using sim::Time;

namespace {
double rate(const hw::TensorEngineSpec& te, numerics::DType a, numerics::DType b) {
  auto ra = te.dtype_rate.find(a), rb = te.dtype_rate.find(b);
  double r = std::min(ra == te.dtype_rate.end() ? 1.0 : ra->second,
                      rb == te.dtype_rate.end() ? 1.0 : rb->second);
  return r > 0 ? r : 1.0;
}

// An MX matmul runs at the rate of its block formats (e.g. mxfp8_e4m3: 4 on Trainium3).
double mx_rate(const hw::TensorEngineSpec& te, numerics::DType a, numerics::DType b) {
  return rate(te, isa::mx_block_dtype(a).value_or(a), isa::mx_block_dtype(b).value_or(b));
}

bool same_operand(const AccessPattern& a, const AccessPattern& b) {
  return a.space == b.space && a.dtype == b.dtype && a.start_partition == b.start_partition &&
         a.partitions == b.partitions && a.offset == b.offset && a.ndims == b.ndims &&
         std::equal(a.dims.begin(), a.dims.begin() + a.ndims, b.dims.begin(),
                    [](isa::Dim x, isa::Dim y) { return x.stride == y.stride && x.count == y.count; });
}
}  // namespace

double TensorEngine::multiply_cycles(const isa::Op& op, const hw::TensorEngineSpec& te) {
  if (auto* mm = std::get_if<isa::Matmul>(&op)) {
    double m = static_cast<double>(mm->stationary.free_size());
    double n = static_cast<double>(mm->moving.free_size());
    double r = mm->sparse_stationary ? te.sparse_speedup : rate(te, mm->stationary.dtype, mm->moving.dtype);
    return std::max(std::min(64.0, m), n) / r;
  }
  if (auto* mx = std::get_if<isa::MatmulMx>(&op)) {
    double m = static_cast<double>(mx->stationary.free_size()), n = static_cast<double>(mx->moving.free_size());
    return std::max(std::min(64.0, m), n) / mx_rate(te, mx->stationary.dtype, mx->moving.dtype);
  }
  if (auto* tr = std::get_if<isa::Transpose>(&op)) {
    double p = tr->in.partitions, f = static_cast<double>(tr->in.free_size());
    return std::max(p, std::min(64.0, f)) / rate(te, tr->in.dtype, tr->in.dtype);
  }
  return 0;
}

double TensorEngine::load_stationary_cycles(const isa::Matmul& mm, const hw::TensorEngineSpec& te) {
  return static_cast<double>(mm.stationary.free_size()) * te.stationary_load_cycles_fraction /
         rate(te, mm.stationary.dtype, mm.stationary.dtype);
}

double TensorEngine::pair_rate(numerics::DType a, numerics::DType b) {
  for (auto& m : rate_memo_)
    if (m.valid && m.a == a && m.b == b) return m.rate;
  RateMemo& m = rate_memo_[next_memo_++ % rate_memo_.size()];
  m = {true, a, b, rate(core_.spec().tensor, a, b)};
  return m.rate;
}

Time TensorEngine::begin(const isa::Instruction& ins, Time t) {
  const auto& te = core_.spec().tensor;
  const auto* mm = std::get_if<isa::Matmul>(&ins.op);
  // Matmul: the formulas of multiply_cycles / load_stationary_cycles with the dtype_rate map
  // lookups memoised (the same dtypes come back on almost every matmul).
  const double multiply = mm ? std::max(std::min(64.0, static_cast<double>(mm->stationary.free_size())),
                                        static_cast<double>(mm->moving.free_size())) /
                                   (mm->sparse_stationary ? te.sparse_speedup : pair_rate(mm->stationary.dtype, mm->moving.dtype))
                             : multiply_cycles(ins.op, te);
  double cycles = multiply;
  if (mm) {
    if (!have_stationary_ || stationary_mx_ || stationary_sparse_ != mm->sparse_stationary ||
        !same_operand(stationary_, mm->stationary)) {
      double load = static_cast<double>(mm->stationary.free_size()) * te.stationary_load_cycles_fraction /
                    pair_rate(mm->stationary.dtype, mm->stationary.dtype);
      bool back_to_back = have_stationary_ && t == last_end_;
      cycles += back_to_back ? std::max(0.0, load - last_multiply_cycles_) : load;
      stationary_ = mm->stationary;
      stationary_sparse_ = mm->sparse_stationary;
      have_stationary_ = true;
    }
    stationary_mx_ = false;
    if (chip_.functional()) execute(*mm);
    last_multiply_cycles_ = multiply;
  } else if (auto* mx = std::get_if<isa::MatmulMx>(&ins.op)) {
    if (!have_stationary_ || !stationary_mx_ || !same_operand(stationary_, mx->stationary) ||
        !same_operand(stationary_scale_, mx->stationary_scale)) {
      const double r = mx_rate(te, mx->stationary.dtype, mx->stationary.dtype);
      const double load = static_cast<double>(mx->stationary.free_size()) * te.stationary_load_cycles_fraction / r;
      const bool back_to_back = have_stationary_ && t == last_end_;
      cycles += back_to_back ? std::max(0.0, load - last_multiply_cycles_) : load;
      stationary_ = mx->stationary;
      stationary_scale_ = mx->stationary_scale;
      stationary_sparse_ = false;
      have_stationary_ = true;
    }
    stationary_mx_ = true;
    if (chip_.functional()) execute(*mx);
    last_multiply_cycles_ = multiply;
  } else if (auto* tr = std::get_if<isa::Transpose>(&ins.op)) {
    have_stationary_ = false;  // the identity matrix replaces the stationary operand
    if (chip_.functional()) execute(*tr);
    last_multiply_cycles_ = cycles;
  }
  Time end = t + Time::cycles(cycles, te.clock, "a TensorE instruction (its cycles over core.tensor.clock)");
  last_end_ = end;
  return end;
}

TensorEngine::~TensorEngine() {
  for (auto& e : cache_) give_back(std::move(e.values));
}

Scratchpad* TensorEngine::scratchpad(const AccessPattern& ap) {
  if (ap.space == isa::Space::SBUF) return &core_.sbuf();
  if (ap.space == isa::Space::PSUM) return &core_.psum();
  return nullptr;
}

TensorEngine::Operand TensorEngine::operand(const AccessPattern& ap, int slot, bool mutate) {
  const int64_t F = ap.free_size();
  Scratchpad* sp = scratchpad(ap);
  if (mutate || !sp) return {core_.read(ap, slot), F};
  PartitionBase mem = sp->base();
  // Decoded tiles are kept while their bytes are unwritten (a stationary is reused across the N
  // tiles of a block, a moving tile across its M tiles). fp32 tiles too: the gemm reading them
  // in place, rows a partition (192 KiB, a multiple of 4 KiB) apart, was slower than the copy
  // (every row maps to the same cache sets).
  const auto [lo, hi] = ap.byte_extent();
  CachedTile* hit = nullptr;
  for (auto& e : cache_)
    if (same_operand(e.ap, ap)) { hit = &e; break; }
  if (hit && sp->last_write(lo, hi) <= hit->stamp) {
    hit->last_use = use_clock_;
    return {hit->values.data(), F};
  }
  const size_t n = static_cast<size_t>(ap.elements());
  if (!hit) {
    // Evict the least recently used tiles (never one used by the current matmul).
    while (cache_floats_ + n > kCacheFloats) {
      auto victim = cache_.end();
      for (auto it = cache_.begin(); it != cache_.end(); ++it)
        if (it->last_use < use_clock_ && (victim == cache_.end() || it->last_use < victim->last_use)) victim = it;
      if (victim == cache_.end()) break;
      cache_floats_ -= victim->values.size();
      give_back(std::move(victim->values));
      if (victim != cache_.end() - 1) *victim = std::move(cache_.back());
      cache_.pop_back();
    }
    cache_.push_back({ap, 0, 0, take_floats(n)});
    hit = &cache_.back();
  }
  cache_floats_ -= hit->values.size();
  hit->values.resize(n);
  cache_floats_ += n;
  read_tile(ap, mem, hit->values.data());
  hit->stamp = sp->stamp();
  hit->last_use = use_clock_;
  return {hit->values.data(), F};
}

void TensorEngine::execute(const isa::Matmul& mm) {
  const int K = mm.moving.partitions;
  const int M = static_cast<int>(mm.stationary.free_size());
  const int N = static_cast<int>(mm.moving.free_size());
  ++use_clock_;
  // Operands: a sparse stationary is pruned in a private copy; the others come from the
  // decoded-tile cache (an entry used by this matmul is never evicted by its other operand).
  Operand ws = operand(mm.stationary, 0, mm.sparse_stationary);
  Operand xs = operand(mm.moving, 1, false);
  if (mm.sparse_stationary) {  // keep the 4 largest |w| of each 16 along K, per column
    float* w = const_cast<float*>(ws.data);  // the private copy from core_.read
    for (int m = 0; m < M; ++m)
      for (int g = 0; g + 16 <= K; g += 16) {
        int idx[16];
        for (int j = 0; j < 16; ++j) idx[j] = g + j;
        std::stable_sort(idx, idx + 16, [&](int a, int b) { return std::fabs(w[a * M + m]) > std::fabs(w[b * M + m]); });
        for (int j = 4; j < 16; ++j) w[idx[j] * M + m] = 0.0f;
      }
  }
  const int lda = static_cast<int>(ws.ld), ldb = static_cast<int>(xs.ld);
  if (mm.out.dtype == numerics::DType::F32 && mm.out.contiguous() && mm.out.space != isa::Space::HBM) {
    // Accumulate straight into PSUM: row m of the result is partition m of the bank.
    Scratchpad* sp = scratchpad(mm.out);
    PartitionBase mem = sp->base();
    float* c = reinterpret_cast<float*>(mem.row(mm.out, 0));
    pe_array_gemm(M, N, K, ws.data, lda, xs.data, ldb, c, static_cast<int64_t>(mem.partition_bytes / 4), !mm.start);
    const auto [lo, hi] = mm.out.byte_extent();
    sp->note_write(lo, hi);
    return;
  }
  // The destination is read only when accumulating into it.
  float* c = mm.start ? core_.scratch(static_cast<size_t>(M) * static_cast<size_t>(N), 2) : core_.read(mm.out, 2);
  pe_array_gemm(M, N, K, ws.data, lda, xs.data, ldb, c, N, !mm.start);
  core_.write(mm.out, c);
}

// Each operand decoded and multiplied by its block scales (exact: a power of two times a
// narrow element), then the fp32-accumulating gemm of the plain matmul.
void TensorEngine::execute(const isa::MatmulMx& mm) {
  const int K = mm.moving.partitions;
  const int M = static_cast<int>(mm.stationary.free_size());
  const int N = static_cast<int>(mm.moving.free_size());
  auto scaled = [&](const AccessPattern& e, const AccessPattern& s, int slot) {
    float* v = core_.read(e, slot);
    const float* sc = core_.read(s, 3);
    const int64_t F = e.free_size();
    for (int k = 0; k < e.partitions; ++k)
      for (int64_t f = 0; f < F; ++f) v[k * F + f] *= sc[(k / 32) * F + f];
    return v;
  };
  const float* w = scaled(mm.stationary, mm.stationary_scale, 0);
  const float* x = scaled(mm.moving, mm.moving_scale, 1);
  float* c = mm.start ? core_.scratch(static_cast<size_t>(M) * static_cast<size_t>(N), 2) : core_.read(mm.out, 2);
  pe_array_gemm(M, N, K, w, M, x, N, c, N, !mm.start);
  core_.write(mm.out, c);
}

void TensorEngine::execute(const isa::Transpose& tr) {
  const int P = tr.in.partitions;
  const int64_t F = tr.in.free_size();
  const float* in = core_.read(tr.in, 0);
  float* out = core_.scratch(static_cast<size_t>(F) * static_cast<size_t>(P), 1);  // [F, P], all written
  // In 32 x 32 blocks: both sides stay in cache (a row-by-row walk strides P floats per write).
  constexpr int64_t kB = 32;
  for (int64_t p0 = 0; p0 < P; p0 += kB)
    for (int64_t f0 = 0; f0 < F; f0 += kB) {
      const int64_t p1 = std::min<int64_t>(P, p0 + kB), f1 = std::min<int64_t>(F, f0 + kB);
      for (int64_t p = p0; p < p1; ++p)
        for (int64_t f = f0; f < f1; ++f) out[f * P + p] = in[p * F + f];
    }
  core_.write(tr.out, out);
}

}  // namespace trnsim::core
