// Registry entries of the library matmul kernels (matmul.h): "matmul" (optimised: blocked,
// hoisted and double-buffered loads) and "matmul_naive" (no DMA/compute overlap).
#include <fmt/format.h>

#include <cmath>

#include "trnsim/kernels/matmul.h"
#include "trnsim/kernels/registry.h"

namespace trnsim::kernels {
namespace {

// fp8 products accumulate in fp32 and come out as bf16; other dtypes come out as themselves.
DType result_dtype(DType in) {
  return in == DType::F8E4M3 || in == DType::F8E5M2 || in == DType::F8E3M4 ? DType::BF16 : in;
}

KernelDef matmul_def(MatmulVariant variant) {
  KernelDef k;
  const bool opt = variant == MatmulVariant::Optimized;
  k.name = opt ? "matmul" : "matmul_naive";
  k.description = opt ? "result[m, n] = lhsT[k, m]^T @ rhs[k, n], blocked with double-buffered loads (NKI tutorial's optimised kernel)"
                      : "result[m, n] = lhsT[k, m]^T @ rhs[k, n], one tile at a time with no DMA/compute overlap";
  k.params = {{"m", "rows of the result (multiple of 128)", KernelParam::Kind::Int, 512, 128, 1 << 20, {}},
              {"k", "contraction size (multiple of 128)", KernelParam::Kind::Int, 512, 128, 1 << 20, {}},
              {"n", "columns of the result (multiple of 512, or less than 512)", KernelParam::Kind::Int, 512, 1, 1 << 20, {}}};
  k.dtypes = {DType::BF16, DType::F32, DType::F16, DType::F8E4M3, DType::F8E5M2};
  k.build = [variant](const hw::ChipSpec& chip, const KernelArgs& a) {
    MatmulShape s{a.i("m"), a.i("k"), a.i("n"), a.dtype, result_dtype(a.dtype)};
    return matmul_program(chip, s, variant);
  };
  k.reference = [](const KernelArgs& a, const Tensors& in) {
    const int64_t M = a.i("m"), K = a.i("k"), N = a.i("n");
    const auto &lhsT = in.at("lhsT"), &rhs = in.at("rhs");
    std::vector<double> out(M * N, 0.0);
    for (int64_t kk = 0; kk < K; ++kk)
      for (int64_t m = 0; m < M; ++m) {
        const double l = lhsT[kk * M + m];
        double* o = &out[m * N];
        const float* r = &rhs[kk * N];
        for (int64_t n = 0; n < N; ++n) o[n] += l * r[n];
      }
    return ReferenceOutputs{{"result", std::move(out)}};
  };
  // Results are sums of K products of values in [-1, 1] (magnitude ~ sqrt(K)/3). fp32: PSUM
  // accumulation error grows with K; narrower outputs round to their own precision.
  k.tolerance = [](const KernelArgs& a) {
    const double K = static_cast<double>(a.i("k"));
    switch (result_dtype(a.dtype)) {
      case DType::F32: return Tolerance{1e-6 * K, 1e-5};
      case DType::F16: return Tolerance{1e-3 * std::sqrt(K), 2e-3};
      default: return Tolerance{4e-3 * std::sqrt(K), 1e-2};
    }
  };
  return k;
}

}  // namespace

KernelDef matmul_optimized_def() { return matmul_def(MatmulVariant::Optimized); }
KernelDef matmul_naive_def() { return matmul_def(MatmulVariant::Naive); }

}  // namespace trnsim::kernels
