#include "trnsim/collectives/size_sweep.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <string>

#include "trnsim/common/error.h"

namespace trnsim::collectives {

int64_t parse_size(std::string_view s) {
  std::string t;
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c))) t += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  size_t i = 0;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  std::string unit = t.substr(i);
  if (i == 0 || i > 15)
    throw ShapeError(fmt::format("size '{}': expected a byte count such as 4096, 64K, 1M or 1G", s));
  const int64_t v = std::stoll(t.substr(0, i));
  int shift = -1;
  for (auto [u, sh] : {std::pair{"", 0}, {"B", 0}, {"K", 10}, {"KB", 10}, {"KIB", 10}, {"M", 20}, {"MB", 20},
                       {"MIB", 20}, {"G", 30}, {"GB", 30}, {"GIB", 30}, {"T", 40}, {"TB", 40}, {"TIB", 40}})
    if (unit == u) shift = sh;
  if (shift < 0) throw ShapeError(fmt::format("size '{}': unknown unit '{}' (use K, M, G or T; binary)", s, unit));
  if (v > (int64_t{1} << (62 - shift))) throw ShapeError(fmt::format("size '{}' is too large", s));
  if (v <= 0) throw ShapeError(fmt::format("size '{}' must be positive", s));
  return v << shift;
}

std::vector<int64_t> parse_sizes(std::string_view spec, double factor) {
  // Checked whether or not the sizes hold a range: --step-factor -1 beside one size was taken.
  if (!(factor > 1.0)) throw ShapeError(fmt::format("step factor {} must be > 1", factor));
  std::vector<int64_t> out;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    std::string_view item = spec.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const size_t colon = item.find(':');
    if (colon == std::string_view::npos) {
      out.push_back(parse_size(item));
    } else {
      if (!(factor > 1.0)) throw ShapeError(fmt::format("step factor {} must be > 1", factor));
      const int64_t lo = parse_size(item.substr(0, colon)), hi = parse_size(item.substr(colon + 1));
      if (lo > hi) throw ShapeError(fmt::format("size range '{}': the start is above the end", item));
      for (double v = static_cast<double>(lo); v <= static_cast<double>(hi) * (1 + 1e-12); v *= factor)
        out.push_back(static_cast<int64_t>(std::llround(v)));
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (out.empty()) throw ShapeError("no sizes given");
  return out;
}

}  // namespace trnsim::collectives
