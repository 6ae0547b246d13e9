// CPU detection for the conversion loops (see simd_dispatch.h).
#include "trnsim/numerics/simd_dispatch.h"

#include <atomic>

namespace trnsim::numerics::detail {
namespace {

bool cpu_has_avx2() {
#if TRNSIM_NUMERICS_AVX2
  __builtin_cpu_init();  // safe even if the first conversion runs in a static constructor
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

std::atomic<bool>& allowed() {
  static std::atomic<bool> a{true};
  return a;
}

}  // namespace

bool use_avx2() {
  static const bool has = cpu_has_avx2();
  return has && allowed().load(std::memory_order_relaxed);
}

void allow_avx2(bool allow) { allowed().store(allow, std::memory_order_relaxed); }

}  // namespace trnsim::numerics::detail
