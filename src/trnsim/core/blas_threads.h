// OpenBLAS thread count for functional-mode matmul tiles. A run makes many small sgemm calls
// (one 128 x 128 x <=512 tile each, ~17 MFLOP); on this 2-core, shared host OpenBLAS' hand-off
// to its worker threads (spinning in sched_yield while the other core runs someone else's work)
// cost more than the split saved: the functional matmul benchmark ran at 0.41-0.53 of the host
// sgemm with one thread against 0.32-0.40 with two (load average ~7, docs/simulator.md). So a
// functional run sets OpenBLAS to one thread and restores the caller's count at its end.
// TRNSIM_BLAS_THREADS=n picks n instead (0: leave OpenBLAS alone). Results do not depend on it
// (OpenBLAS splits gemm over M and N, never K). Switching the count per call was tried and is
// far slower (openblas_set_num_threads is not cheap). Without OpenBLAS (symbols looked up
// weakly) this does nothing.
#pragma once

namespace trnsim::core {

class BlasThreads {
 public:
  explicit BlasThreads(bool active);
  ~BlasThreads();
  BlasThreads(const BlasThreads&) = delete;
  BlasThreads& operator=(const BlasThreads&) = delete;

 private:
  int saved_ = 0;  // the caller's thread count to restore, 0: nothing to restore
};

}  // namespace trnsim::core
