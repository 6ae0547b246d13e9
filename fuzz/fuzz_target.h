// The contract every fuzz target checks: any input ends in success or a trnsim::Error (a
// one-line typed error), never a crash, hang, sanitizer report or other exception. Each
// target defines the libFuzzer entry point, built two ways: with libFuzzer (make fuzz,
// clang) and with replay_main.cpp, which feeds the regression corpus to it in `make test`.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "trnsim/common/error.h"

namespace trnsim::fuzz {

// Runs f(bytes); a trnsim::Error is the expected outcome for bad input. Anything else escapes
// and aborts (libFuzzer and the replay driver both report it with the input).
template <class F>
int run_target(const uint8_t* data, size_t size, F&& f) {
  // The memory limit (common/limits.h) inside the fuzzers' RSS limit (-rss_limit_mb=4096):
  // work past it must be refused up front, as it is for users past theirs.
  static const bool limited = setenv("TRNSIM_MAX_MEMORY", "1G", /*overwrite=*/0) == 0;
  (void)limited;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    f(bytes);
  } catch (const trnsim::Error&) {
  }
  return 0;
}

}  // namespace trnsim::fuzz
