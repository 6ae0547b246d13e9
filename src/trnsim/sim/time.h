// Simulated time: an integer count of picoseconds, so runs are exactly reproducible and event
// order never depends on floating-point rounding. Conversions from physical quantities round
// up to the next picosecond (an operation never takes less time than the model says).
#pragma once
#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>

#include "trnsim/common/units.h"

namespace trnsim::sim {

class Time {
 public:
  constexpr Time() = default;
  static constexpr Time ps(int64_t v) { return Time(v); }
  // Every conversion from a double checks its range: a NaN, an infinity or a duration past
  // int64 picoseconds (about 106 days) is a ShapeError naming `what` (the field or the
  // instruction), never an undefined cast. `what` is only read when the check fails.
  static Time from_ns(double ns, const char* what = "a duration") {
    return from_whole_ps(std::ceil(ns * 1000.0 - 1e-6), ns, what);
  }
  static Time from(Nanoseconds t, const char* what = "a duration") { return from_ns(t.value(), what); }
  // n cycles of a clock f (ceil to whole picoseconds).
  static Time cycles(double n, GHz f, const char* what = "an instruction's cycles") { return from_ns(n / f.value(), what); }
  // A count of picoseconds the caller has already rounded (ns only for the message).
  static Time from_whole_ps(double ps, double ns, const char* what) {
    // 2^63 is exact as a double; int64 holds [-2^63, 2^63).
    if (!(ps >= -0x1p63 && ps < 0x1p63)) throw_out_of_range(ns, what);
    return Time(static_cast<int64_t>(ps));
  }
  static constexpr Time max() { return Time(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t ps() const { return v_; }
  constexpr double ns() const { return static_cast<double>(v_) * 1e-3; }
  constexpr double us() const { return static_cast<double>(v_) * 1e-6; }
  constexpr double ms() const { return static_cast<double>(v_) * 1e-9; }
  Nanoseconds nanoseconds() const { return Nanoseconds(ns()); }

  // Checked: a sum past int64 picoseconds is a ShapeError, not a wrapped (earlier) time.
  constexpr Time operator+(Time o) const {
    int64_t r;
    if (__builtin_add_overflow(v_, o.v_, &r)) throw_overflow();
    return Time(r);
  }
  constexpr Time operator-(Time o) const {
    int64_t r;
    if (__builtin_sub_overflow(v_, o.v_, &r)) throw_overflow();
    return Time(r);
  }
  constexpr Time& operator+=(Time o) { return *this = *this + o; }
  constexpr auto operator<=>(const Time&) const = default;

 private:
  constexpr explicit Time(int64_t v) : v_(v) {}
  [[noreturn]] static void throw_out_of_range(double ns, const char* what);
  [[noreturn]] static void throw_overflow();
  int64_t v_ = 0;
};

constexpr Time max(Time a, Time b) { return a < b ? b : a; }
constexpr Time min(Time a, Time b) { return a < b ? a : b; }

}  // namespace trnsim::sim
