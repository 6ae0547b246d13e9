#include "trnsim/core/tensor_engine.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "trnsim/core/chip.h"
#include "trnsim/core/neuron_core.h"

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

Time TensorEngine::begin(const isa::Instruction& ins, Time t) {
  const auto& te = core_.spec().tensor;
  double cycles = multiply_cycles(ins.op, te);
  if (auto* mm = std::get_if<isa::Matmul>(&ins.op)) {
    if (!have_stationary_ || stationary_sparse_ != mm->sparse_stationary ||
        !same_operand(stationary_, mm->stationary)) {
      double load = load_stationary_cycles(*mm, te);
      bool back_to_back = have_stationary_ && t == last_end_;
      cycles += back_to_back ? std::max(0.0, load - last_multiply_cycles_) : load;
      stationary_ = mm->stationary;
      stationary_sparse_ = mm->sparse_stationary;
      have_stationary_ = true;
    }
    if (chip_.functional()) execute(*mm);
    last_multiply_cycles_ = multiply_cycles(ins.op, te);
  } else if (auto* tr = std::get_if<isa::Transpose>(&ins.op)) {
    have_stationary_ = false;  // the identity matrix replaces the stationary operand
    if (chip_.functional()) execute(*tr);
    last_multiply_cycles_ = cycles;
  }
  Time end = t + Time::cycles(cycles, te.clock);
  last_end_ = end;
  return end;
}

void TensorEngine::execute(const isa::Matmul& mm) {
  const int K = mm.moving.partitions;
  const int M = static_cast<int>(mm.stationary.free_size());
  const int N = static_cast<int>(mm.moving.free_size());
  float* w = core_.read(mm.stationary, 0);   // [K, M]
  float* x = core_.read(mm.moving, 1);       // [K, N]
  if (mm.sparse_stationary) {  // keep the 4 largest |w| of each 16 along K, per column
    for (int m = 0; m < M; ++m)
      for (int g = 0; g + 16 <= K; g += 16) {
        int idx[16];
        for (int j = 0; j < 16; ++j) idx[j] = g + j;
        std::stable_sort(idx, idx + 16, [&](int a, int b) { return std::fabs(w[a * M + m]) > std::fabs(w[b * M + m]); });
        for (int j = 4; j < 16; ++j) w[idx[j] * M + m] = 0.0f;
      }
  }
  const float beta = mm.start ? 0.0f : 1.0f;
  if (mm.out.dtype == numerics::DType::F32 && mm.out.contiguous()) {
    // Accumulate straight into PSUM: row m of the result is partition m of the bank.
    PartitionBase mem = core_.memory(mm.out);
    float* c = reinterpret_cast<float*>(mem.row(mm.out, 0));
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, M, N, K, 1.0f, w, M, x, N, beta, c,
                static_cast<int>(mem.partition_bytes / 4));
    return;
  }
  float* c = mm.start ? core_.read(mm.out, 2) : core_.read(mm.out, 2);
  if (mm.start) std::memset(c, 0, sizeof(float) * M * N);
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, M, N, K, 1.0f, w, M, x, N, beta, c, N);
  core_.write(mm.out, c);
}

void TensorEngine::execute(const isa::Transpose& tr) {
  const int P = tr.in.partitions;
  const int64_t F = tr.in.free_size();
  float* in = core_.read(tr.in, 0);
  float* out = core_.read(tr.out, 1);  // sized [F, P]
  for (int p = 0; p < P; ++p)
    for (int64_t f = 0; f < F; ++f) out[f * P + p] = in[p * F + f];
  core_.write(tr.out, out);
}

}  // namespace trnsim::core
