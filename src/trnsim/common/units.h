// Strong unit types. Every physical quantity in trnsim carries its unit in its type, so a
// bandwidth can never be passed where a capacity is expected. Each type stores one canonical
// unit (named in the alias); conversions happen only through the named accessors below.
#pragma once
#include <compare>

namespace trnsim {

template <class Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double v) : v_(v) {}
  constexpr double value() const { return v_; }

  constexpr Quantity operator+(Quantity o) const { return Quantity(v_ + o.v_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(v_ - o.v_); }
  constexpr Quantity operator*(double k) const { return Quantity(v_ * k); }
  constexpr Quantity operator/(double k) const { return Quantity(v_ / k); }
  constexpr double operator/(Quantity o) const { return v_ / o.v_; }  // a plain ratio
  constexpr Quantity& operator+=(Quantity o) { v_ += o.v_; return *this; }
  constexpr Quantity& operator-=(Quantity o) { v_ -= o.v_; return *this; }
  constexpr auto operator<=>(const Quantity&) const = default;

 private:
  double v_ = 0;
};
template <class Tag>
constexpr Quantity<Tag> operator*(double k, Quantity<Tag> q) { return q * k; }

// Canonical units: bytes; nanoseconds; GB/s (= bytes per ns); GHz (= cycles per ns);
// TFLOPS (10^12 FLOP/s); watts; joules; US dollars per hour; US dollars.
using Bytes = Quantity<struct BytesTag>;
using Nanoseconds = Quantity<struct NanosecondsTag>;
using GBps = Quantity<struct GBpsTag>;
using GHz = Quantity<struct GHzTag>;
using TFlops = Quantity<struct TFlopsTag>;
using Watts = Quantity<struct WattsTag>;
using Joules = Quantity<struct JoulesTag>;
using UsdPerHour = Quantity<struct UsdPerHourTag>;
using Usd = Quantity<struct UsdTag>;

constexpr Nanoseconds operator/(Bytes b, GBps bw) { return Nanoseconds(b.value() / bw.value()); }
constexpr GBps operator/(Bytes b, Nanoseconds t) { return GBps(b.value() / t.value()); }
constexpr Bytes operator*(GBps bw, Nanoseconds t) { return Bytes(bw.value() * t.value()); }
constexpr Joules operator*(Watts p, Nanoseconds t) { return Joules(p.value() * t.value() * 1e-9); }

constexpr double cycles(GHz f, Nanoseconds t) { return f.value() * t.value(); }
constexpr Nanoseconds cycles_to_time(double n, GHz f) { return Nanoseconds(n / f.value()); }
constexpr double to_seconds(Nanoseconds t) { return t.value() * 1e-9; }

constexpr double kKiB = 1024.0, kMiB = kKiB * 1024.0, kGiB = kMiB * 1024.0;

}  // namespace trnsim
