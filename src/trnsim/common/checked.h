// Checked int64 arithmetic for sizes, shapes, strides and extents that come from files or
// users (untrusted): an overflow is a ShapeError naming what was being computed, never
// undefined behaviour or a wrapped value that then passes a bounds check.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "trnsim/common/error.h"

namespace trnsim {

// `what` is a view so that hot callers passing a literal build no string: the message is
// made only when it is thrown (a std::string parameter heap-allocated per call for a literal
// past the small-string buffer, ~10% of a large compile).
[[noreturn]] inline void throw_too_large(std::string_view what) {
  throw ShapeError(std::string(what) + ": shape too large (its size overflows 64-bit arithmetic)");
}

inline int64_t checked_mul(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw_too_large(what);
  return r;
}

inline int64_t checked_add(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw_too_large(what);
  return r;
}

// ceil(a / b) for a >= 0, b > 0 that cannot overflow (`(a + b - 1) / b` did for a dim near
// INT64_MAX, found by fuzzing).
constexpr int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

// Product of non-negative dims (a negative dim is a ShapeError too).
inline int64_t checked_numel(std::span<const int64_t> dims, std::string_view what) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) throw ShapeError(std::string(what) + ": negative dimension " + std::to_string(d));
    n = checked_mul(n, d, what);
  }
  return n;
}

}  // namespace trnsim
