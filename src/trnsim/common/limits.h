// Resource limits every command checks before it spends the resource: host memory for
// functional-mode data. The limit is half the machine's physical memory, or the environment
// variable TRNSIM_MAX_MEMORY (bytes, or with a K/M/G/T suffix: "64G") to raise or lower it.
// Work past it is refused up front with the estimate, never discovered by bad_alloc.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "trnsim/common/error.h"

namespace trnsim {

inline constexpr const char* kMemoryLimitVariable = "TRNSIM_MAX_MEMORY";

inline int64_t memory_limit_bytes() {
  if (const char* env = std::getenv(kMemoryLimitVariable); env && *env) {
    char* end = nullptr;
    const double v = std::strtod(env, &end);
    double scale = 1;
    if (end && *end) {
      switch (*end) {
        case 'k': case 'K': scale = 1024.0; break;
        case 'm': case 'M': scale = 1024.0 * 1024; break;
        case 'g': case 'G': scale = 1024.0 * 1024 * 1024; break;
        case 't': case 'T': scale = 1024.0 * 1024 * 1024 * 1024; break;
        default: scale = 0;
      }
    }
    if (!(v > 0) || scale == 0 || v * scale > 9e18)
      throw ConfigError(fmt::format("{}='{}': expected a positive size in bytes, e.g. 64G", kMemoryLimitVariable, env));
    return static_cast<int64_t>(v * scale);
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return int64_t{8} << 30;
  return static_cast<int64_t>(pages) * page / 2;
}

// GiB, or MiB below one GiB (a small TRNSIM_MAX_MEMORY read "0.0 GiB").
inline std::string gib(double bytes) {
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  return bytes < kGiB ? fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024)) : fmt::format("{:.1f} GiB", bytes / kGiB);
}

// Throws ShapeError when `bytes` (an estimate of what `what` needs) exceeds the limit. `hint`
// says what to do instead (e.g. "use --timing-only").
inline void check_memory(double bytes, const std::string& what, const std::string& hint = "") {
  const int64_t limit = memory_limit_bytes();
  if (bytes <= static_cast<double>(limit)) return;
  throw ShapeError(fmt::format("{} needs about {} of host memory, above the limit of {} (set {} to raise it){}{}",
                               what, gib(bytes), gib(static_cast<double>(limit)), kMemoryLimitVariable,
                               hint.empty() ? "" : "; ", hint));
}

}  // namespace trnsim
