// Runtime choice of the instruction set for the conversion loops: the same source loop is
// compiled for the x86-64 baseline (SSE2) and, on GCC/Clang x86-64, also for AVX2, which runs
// it about twice as fast. No -march flag is needed, so one binary runs on any x86-64 CPU. Both
// builds compute identical bits (integer ops and single IEEE adds, no contraction).
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TRNSIM_NUMERICS_AVX2 1
#define TRNSIM_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define TRNSIM_NUMERICS_AVX2 0
#define TRNSIM_TARGET_AVX2
#endif

namespace trnsim::numerics::detail {

// True when the CPU has AVX2 and the AVX2 loops are built and allowed.
bool use_avx2();
// Tests: force the baseline loops (false) or return to the detected choice (true).
void allow_avx2(bool allow);

}  // namespace trnsim::numerics::detail
