// Quantities with units as written in configs ("2.9 TB/s", "96 GiB", "2.4 GHz", "1300 ns"),
// parsed into the strong unit types of common/units.h. A unit is required, must be of the
// expected kind (a capacity is not a bandwidth), and is case-sensitive because "Gb/s" (bits)
// and "GB/s" (bytes) differ by 8x.
#pragma once
#include <string>
#include <string_view>

#include "trnsim/common/units.h"

namespace trnsim::hw {

enum class Dimension { Capacity, Bandwidth, Frequency, Duration, Power, Compute, Price, Energy, Money };

// What a value of this dimension must look like, for error messages:
// "a positive bandwidth with a unit (e.g. '2.9 TB/s', '820 GiB/s', '800 Gb/s')".
std::string expectation(Dimension d);

// The value in the canonical unit of units.h (bytes, GB/s, GHz, ns, W, TFLOPS, USD/h, J, USD).
// Capacity, bandwidth, frequency, power and compute must be > 0; durations and prices >= 0.
// Throws ConfigError("expected <expectation>, got '<text>'" + a hint on the unit).
double parse_quantity(std::string_view text, Dimension d);

inline Bytes parse_bytes(std::string_view s) { return Bytes(parse_quantity(s, Dimension::Capacity)); }
inline GBps parse_bandwidth(std::string_view s) { return GBps(parse_quantity(s, Dimension::Bandwidth)); }
inline GHz parse_frequency(std::string_view s) { return GHz(parse_quantity(s, Dimension::Frequency)); }
inline Nanoseconds parse_duration(std::string_view s) {
  return Nanoseconds(parse_quantity(s, Dimension::Duration));
}
inline Watts parse_power(std::string_view s) { return Watts(parse_quantity(s, Dimension::Power)); }
inline TFlops parse_compute(std::string_view s) { return TFlops(parse_quantity(s, Dimension::Compute)); }
inline UsdPerHour parse_price(std::string_view s) {
  return UsdPerHour(parse_quantity(s, Dimension::Price));
}

// The dimension a unit type is parsed as, for generic readers (yaml_fields.h).
template <class Q> struct DimensionOf;
template <> struct DimensionOf<Bytes> { static constexpr Dimension value = Dimension::Capacity; };
template <> struct DimensionOf<GBps> { static constexpr Dimension value = Dimension::Bandwidth; };
template <> struct DimensionOf<GHz> { static constexpr Dimension value = Dimension::Frequency; };
template <> struct DimensionOf<Nanoseconds> { static constexpr Dimension value = Dimension::Duration; };
template <> struct DimensionOf<Watts> { static constexpr Dimension value = Dimension::Power; };
template <> struct DimensionOf<TFlops> { static constexpr Dimension value = Dimension::Compute; };
template <> struct DimensionOf<UsdPerHour> { static constexpr Dimension value = Dimension::Price; };
template <> struct DimensionOf<Joules> { static constexpr Dimension value = Dimension::Energy; };
template <> struct DimensionOf<Usd> { static constexpr Dimension value = Dimension::Money; };

}  // namespace trnsim::hw
