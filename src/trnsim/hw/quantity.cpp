#include "trnsim/hw/quantity.h"

#include <fmt/core.h>

#include <array>
#include <charconv>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "trnsim/common/error.h"

namespace trnsim::hw {
namespace {

struct Unit {
  std::string_view symbol;
  double scale;  // canonical units per one of this unit
};

struct DimensionInfo {
  Dimension dim;
  std::string_view noun;      // "bandwidth"
  std::string_view examples;  // "'2.9 TB/s', '820 GiB/s', '800 Gb/s'"
  bool zero_allowed;
  std::vector<Unit> units;
  // The range the simulator takes (canonical units), with its text for errors: durations
  // are integer picoseconds in int64 (about 106 days), so a 1 Hz clock or a 1 B/s link would
  // overflow simulated time; a capacity below one byte would round to none.
  double min = 0, max = 0;
  std::string_view range;
};

constexpr double kKB = 1e3, kMB = 1e6, kGB = 1e9, kTB = 1e12, kTiB = kGiB * 1024.0;

// One table for every dimension; the canonical unit of each row is the one of units.h.
const std::vector<DimensionInfo>& table() {
  static const std::vector<DimensionInfo> t = {
      {Dimension::Capacity, "capacity", "'96 GiB', '24 MiB', '2 KiB'", false,
       {{"B", 1}, {"KB", kKB}, {"MB", kMB}, {"GB", kGB}, {"TB", kTB},
        {"KiB", kKiB}, {"MiB", kMiB}, {"GiB", kGiB}, {"TiB", kTiB}},
       1, 1e18, "1 B to 1 EB"},
      // Canonical GB/s (= bytes per ns). Bit rates (b/s, Gbps) are divided by 8.
      {Dimension::Bandwidth, "bandwidth", "'2.9 TB/s', '820 GiB/s', '800 Gb/s'", false,
       {{"B/s", 1 / kGB}, {"KB/s", kKB / kGB}, {"MB/s", kMB / kGB}, {"GB/s", 1}, {"TB/s", kTB / kGB},
        {"KiB/s", kKiB / kGB}, {"MiB/s", kMiB / kGB}, {"GiB/s", kGiB / kGB}, {"TiB/s", kTiB / kGB},
        {"b/s", 1 / kGB / 8}, {"Kb/s", kKB / kGB / 8}, {"Mb/s", kMB / kGB / 8},
        {"Gb/s", 1.0 / 8}, {"Tb/s", kTB / kGB / 8},
        {"Kbps", kKB / kGB / 8}, {"Mbps", kMB / kGB / 8}, {"Gbps", 1.0 / 8}, {"Tbps", kTB / kGB / 8}},
       1e-3, 1e9, "1 MB/s to 1 EB/s"},
      {Dimension::Frequency, "frequency", "'2.4 GHz', '960 MHz'", false,
       {{"Hz", 1e-9}, {"kHz", 1e-6}, {"MHz", 1e-3}, {"GHz", 1}}, 1e-3, 1e3, "1 MHz to 1000 GHz"},
      {Dimension::Duration, "duration", "'1300 ns', '1.5 us', '2 ms'", true,
       {{"ps", 1e-3}, {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}}, 0, 3.6e12, "0 to 1 hour"},
      {Dimension::Power, "power", "'500 W', '1.4 kW'", false, {{"W", 1}, {"kW", 1e3}}, 0, 1e12, "up to 1 TW"},
      {Dimension::Compute, "compute rate", "'667 TFLOPS', '2.5 PFLOPS'", false,
       {{"GFLOPS", 1e-3}, {"TFLOPS", 1}, {"PFLOPS", 1e3}}, 1e-6, 1e9, "1 MFLOPS to 1 ZFLOPS"},
      {Dimension::Price, "price", "'21.50 USD/h'", true, {{"USD/h", 1}, {"USD/hour", 1}}, 0, 1e12, "up to 10^12 USD/h"},
      // Energy coefficients are per MAC, element or byte: picojoules, canonical joules.
      {Dimension::Energy, "energy", "'0.5 pJ', '2 nJ'", true,
       {{"fJ", 1e-15}, {"pJ", 1e-12}, {"nJ", 1e-9}, {"uJ", 1e-6}, {"mJ", 1e-3}, {"J", 1}}, 0, 1e9, "up to 1 GJ"},
      {Dimension::Money, "amount of money", "'35000 USD'", true, {{"USD", 1}}, 0, 1e15, "up to 10^15 USD"},
  };
  return t;
}

const DimensionInfo& info(Dimension d) {
  for (auto& i : table())
    if (i.dim == d) return i;
  throw std::logic_error("quantity: dimension missing from the unit table");
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string unit_list(const DimensionInfo& i) {
  std::string out;
  for (auto& u : i.units) out += (out.empty() ? "" : ", ") + std::string(u.symbol);
  return out;
}

[[noreturn]] void fail(std::string_view text, Dimension d, std::string_view hint = {}) {
  std::string msg = fmt::format("expected {}, got '{}'", expectation(d), text);
  if (!hint.empty()) msg += fmt::format(" ({})", hint);
  throw ConfigError(msg);
}

}  // namespace

std::string expectation(Dimension d) {
  auto& i = info(d);
  return fmt::format("a {} {} with a unit (e.g. {})", i.zero_allowed ? "non-negative" : "positive",
                     i.noun, i.examples);
}

double parse_quantity(std::string_view text, Dimension d) {
  const DimensionInfo& dim = info(d);
  std::string_view s = trim(text);
  double number = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), number);
  if (ec != std::errc() || !std::isfinite(number)) fail(text, d, "no number");
  std::string_view unit = trim(std::string_view(end, s.data() + s.size() - end));
  if (unit.empty()) fail(text, d, "missing unit");
  for (auto& u : dim.units) {
    if (u.symbol != unit) continue;
    if (number < 0 || (number == 0 && !dim.zero_allowed))
      fail(text, d, number < 0 ? "negative" : "zero");
    const double v = number * u.scale;
    if ((v < dim.min && !(v == 0 && dim.zero_allowed)) || v > dim.max)
      fail(text, d, fmt::format("outside the range the simulator takes, {}", dim.range));
    return v;
  }
  for (auto& other : table())
    for (auto& u : other.units)
      if (u.symbol == unit) fail(text, d, fmt::format("{} is a unit of {}", unit, other.noun));
  fail(text, d, fmt::format("unknown unit '{}'; use one of {}", unit, unit_list(dim)));
}

}  // namespace trnsim::hw
