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
  static Time from_ns(double ns) { return Time(static_cast<int64_t>(std::ceil(ns * 1000.0 - 1e-6))); }
  static Time from(Nanoseconds t) { return from_ns(t.value()); }
  // n cycles of a clock f (ceil to whole picoseconds).
  static Time cycles(double n, GHz f) { return from_ns(n / f.value()); }
  static constexpr Time max() { return Time(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t ps() const { return v_; }
  constexpr double ns() const { return static_cast<double>(v_) * 1e-3; }
  constexpr double us() const { return static_cast<double>(v_) * 1e-6; }
  constexpr double ms() const { return static_cast<double>(v_) * 1e-9; }
  Nanoseconds nanoseconds() const { return Nanoseconds(ns()); }

  constexpr Time operator+(Time o) const { return Time(v_ + o.v_); }
  constexpr Time operator-(Time o) const { return Time(v_ - o.v_); }
  constexpr Time& operator+=(Time o) { v_ += o.v_; return *this; }
  constexpr auto operator<=>(const Time&) const = default;

 private:
  constexpr explicit Time(int64_t v) : v_(v) {}
  int64_t v_ = 0;
};

constexpr Time max(Time a, Time b) { return a < b ? b : a; }
constexpr Time min(Time a, Time b) { return a < b ? a : b; }

}  // namespace trnsim::sim
