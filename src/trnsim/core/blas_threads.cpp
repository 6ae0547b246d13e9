#include "trnsim/core/blas_threads.h"

#include <cstdlib>

extern "C" {
int openblas_get_num_threads(void) __attribute__((weak));
void openblas_set_num_threads(int) __attribute__((weak));
}

namespace trnsim::core {

BlasThreads::BlasThreads(bool active) {
  if (!active || !openblas_get_num_threads || !openblas_set_num_threads) return;
  int want = 1;
  if (const char* e = std::getenv("TRNSIM_BLAS_THREADS")) want = std::atoi(e);
  if (want <= 0) return;
  const int caller = openblas_get_num_threads();
  if (want == caller) return;
  saved_ = caller;
  openblas_set_num_threads(want);
}

BlasThreads::~BlasThreads() {
  if (saved_ > 0) openblas_set_num_threads(saved_);
}

}  // namespace trnsim::core
