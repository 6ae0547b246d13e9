#include "trnsim/core/pe_array_gemm.h"

#include <cstring>
#include <vector>

// Built with -ffp-contract=off (src/CMakeLists.txt): a fused multiply-add would round once
// where the contract above rounds twice, and only on CPUs that have one.
namespace trnsim::core {
namespace {

using v8 = float __attribute__((vector_size(32)));
constexpr int kRows = 4;   // rows of a register block
constexpr int kCols = 16;  // columns of a register block (two 8-float vectors)

inline __attribute__((always_inline)) v8 load8(const float* p) {
  v8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline __attribute__((always_inline)) void store8(float* p, v8 v) { std::memcpy(p, &v, sizeof v); }

// R rows x 16 columns from packed operands: wp[k][kRows] (this row block's w) and xp[k][16].
template <int R>
inline __attribute__((always_inline)) void block(int K, const float* wp, const float* xp, float* c,
                                                 int64_t ldc, bool acc) {
  v8 s[R][2] = {};
  for (int k = 0; k < K; ++k) {
    const v8 b0 = load8(xp + k * kCols), b1 = load8(xp + k * kCols + 8);
    for (int r = 0; r < R; ++r) {
      const float a = wp[k * kRows + r];
      s[r][0] += a * b0;
      s[r][1] += a * b1;
    }
  }
  for (int r = 0; r < R; ++r) {
    float* cr = c + r * ldc;
    if (acc) {
      s[r][0] = load8(cr) + s[r][0];
      s[r][1] = load8(cr + 8) + s[r][1];
    }
    store8(cr, s[r][0]);
    store8(cr + 8, s[r][1]);
  }
}

// One output element: the same operations as one lane of block().
inline __attribute__((always_inline)) void element(int K, const float* w, int64_t ldw, const float* x,
                                                   int64_t ldx, float* c, bool acc) {
  float s = 0.0f;
  for (int k = 0; k < K; ++k) s += w[k * ldw] * x[k * ldx];
  *c = acc ? *c + s : s;
}

}  // namespace

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("avx2", "default")))
#endif
void pe_array_gemm(int M, int N, int K, const float* w, int64_t ldw, const float* x, int64_t ldx,
                   float* c, int64_t ldc, bool accumulate) {
  // Both operands are packed so the inner loop streams contiguous memory: rows of a tile lie a
  // partition (KiBs) apart, and reading them in place thrashes a few cache sets.
  thread_local std::vector<float> wpack, xpack;
  const int mb = M / kRows;  // full row blocks; the rest of the rows go element by element
  wpack.resize(static_cast<size_t>(mb) * K * kRows);
  xpack.resize(static_cast<size_t>(K) * kCols);
  for (int b = 0; b < mb; ++b)
    for (int k = 0; k < K; ++k)
      std::memcpy(&wpack[(static_cast<size_t>(b) * K + k) * kRows], w + k * ldw + b * kRows, sizeof(float) * kRows);
  int n = 0;
  for (; n + kCols <= N; n += kCols) {
    for (int k = 0; k < K; ++k) std::memcpy(&xpack[static_cast<size_t>(k) * kCols], x + k * ldx + n, sizeof(float) * kCols);
    for (int b = 0; b < mb; ++b)
      block<kRows>(K, &wpack[static_cast<size_t>(b) * K * kRows], xpack.data(), c + b * kRows * ldc + n, ldc, accumulate);
    for (int m = mb * kRows; m < M; ++m)
      for (int j = 0; j < kCols; ++j) element(K, w + m, ldw, x + n + j, ldx, c + m * ldc + n + j, accumulate);
  }
  for (; n < N; ++n)
    for (int m = 0; m < M; ++m) element(K, w + m, ldw, x + n, ldx, c + m * ldc + n, accumulate);
}

}  // namespace trnsim::core
