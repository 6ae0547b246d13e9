// The TensorE's fp32 arithmetic (pe_array_gemm.h): every element equals the scalar loop that
// adds fp32-rounded products in ascending k, bit for bit, whatever the tile's shape, the
// element's position in it and the vector width the CPU runs; accumulation adds the tile's sum
// to what the output held.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "trnsim/core/pe_array_gemm.h"

namespace trnsim::core {
namespace {

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// The contract, written as plainly as possible (volatile keeps each rounding a separate step).
float reference(int K, const float* w, int64_t ldw, const float* x, int64_t ldx, float old, bool acc) {
  volatile float s = 0.0f;
  for (int k = 0; k < K; ++k) {
    volatile float p = w[k * ldw] * x[k * ldx];
    s = s + p;
  }
  return acc ? old + s : s;
}

TEST(PeArrayGemm, EqualsTheOrderedScalarSumBitForBit) {
  for (auto [M, N, K] : {std::tuple{128, 512, 128}, {1, 1, 1}, {3, 17, 5}, {7, 33, 64}, {128, 100, 128}, {5, 16, 1}}) {
    const int64_t ldw = M + 3, ldx = N + 5, ldc = N + 2;  // strided, as partitions are
    auto w = random_values(static_cast<size_t>(K * ldw), 1), x = random_values(static_cast<size_t>(K * ldx), 2);
    for (bool acc : {false, true}) {
      auto c = random_values(static_cast<size_t>(M * ldc), 3);
      const auto old = c;
      pe_array_gemm(M, N, K, w.data(), ldw, x.data(), ldx, c.data(), ldc, acc);
      for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
          const size_t i = static_cast<size_t>(m * ldc + n);
          ASSERT_EQ(c[i], reference(K, w.data() + m, ldw, x.data() + n, ldx, old[i], acc))
              << M << "x" << N << "x" << K << " acc " << acc << " at " << m << "," << n;
        }
      for (int m = 0; m < M; ++m)  // the padding between rows is untouched
        for (int64_t n = N; n < ldc; ++n) ASSERT_EQ(c[static_cast<size_t>(m * ldc + n)], old[static_cast<size_t>(m * ldc + n)]);
    }
  }
}

TEST(PeArrayGemm, ABlockOfTheTileGivesTheSameBitsAsTheWholeTile) {
  // What splitting a matmul over cores relies on: columns 256-511 and rows 3-127 computed
  // alone equal the same elements of the full 128 x 512 product (OpenBLAS 0.3.21 differed here).
  const int M = 128, N = 512, K = 128;
  auto w = random_values(static_cast<size_t>(K * M), 4), x = random_values(static_cast<size_t>(K * N), 5);
  std::vector<float> full(static_cast<size_t>(M * N)), part(static_cast<size_t>(M * N));
  pe_array_gemm(M, N, K, w.data(), M, x.data(), N, full.data(), N, false);
  for (int off : {0, 7, 256, 300}) {
    pe_array_gemm(M - 3, N - off, K, w.data() + 3, M, x.data() + off, N, part.data(), N, false);
    for (int m = 0; m < M - 3; ++m)
      for (int n = 0; n < N - off; ++n)
        ASSERT_EQ(part[static_cast<size_t>(m * N + n)], full[static_cast<size_t>((m + 3) * N + n + off)]) << off;
  }
}

}  // namespace
}  // namespace trnsim::core
