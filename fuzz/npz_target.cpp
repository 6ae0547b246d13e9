// The .npz reader: bytes -> libzip -> .npy headers and data. The memory limit is lowered to
// 256 MiB so that a bomb the limit should refuse is found as a slow, large input.
#include <cstdlib>

#include "fuzz_target.h"
#include "trnsim/runtime/npz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int once = setenv("TRNSIM_MAX_MEMORY", "256M", 0);
  (void)once;
  return trnsim::fuzz::run_target(data, size, [](const std::string& bytes) { trnsim::runtime::read_npz_bytes(bytes, "fuzz.npz"); });
}
