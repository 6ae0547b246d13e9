#include "trnsim/workloads/traffic_lengths.h"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "trnsim/common/error.h"
#include "trnsim/workloads/traffic_random.h"
#include "trnsim/workloads/traffic_trace.h"

namespace trnsim::workloads {
namespace {

int64_t parse_int(const std::string& s, const std::string& which, const std::string& text) {
  int64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size())
    throw ConfigError(fmt::format("--{} '{}': expected N, LO:HI or fit:TRACE.csv", which, text));
  if (v < 0) throw ConfigError(fmt::format("--{} '{}': token counts must be positive", which, text));
  return v;
}

}  // namespace

std::string LengthSpec::describe() const {
  if (kind == "fixed") return fmt::format("{}", lo);
  if (kind == "uniform") return fmt::format("uniform {}..{}", lo, hi);
  return fmt::format("lognormal(mu {:.3f}, sigma {:.3f}) in {}..{}", mu, sigma, lo, hi);
}

LengthSpec parse_length_spec(const std::string& text, const std::string& which) {
  LengthSpec s;
  if (text.rfind("fit:", 0) == 0) {
    const auto rows = read_azure_trace(text.substr(4));
    double sum = 0, sum2 = 0;
    int64_t n = 0;
    s.lo = INT64_MAX;
    for (const auto& r : rows) {
      const int64_t v = which == "input" ? r.input : r.output;
      if (v <= 0) continue;  // log-normal support; zero-length rows do not enter the fit
      const double l = std::log(static_cast<double>(v));
      sum += l, sum2 += l * l, ++n;
      s.lo = std::min(s.lo, v), s.hi = std::max(s.hi, v);
    }
    if (n < 2) throw ConfigError(fmt::format("--{} {}: fewer than 2 positive lengths to fit", which, text));
    s.kind = "lognormal";
    s.mu = sum / n;
    s.sigma = std::sqrt(std::max(0.0, sum2 / n - s.mu * s.mu));
    return s;
  }
  const auto colon = text.find(':');
  if (colon == std::string::npos) {
    s.lo = s.hi = parse_int(text, which, text);
  } else {
    s.kind = "uniform";
    s.lo = parse_int(text.substr(0, colon), which, text);
    s.hi = parse_int(text.substr(colon + 1), which, text);
    if (s.hi < s.lo) throw ConfigError(fmt::format("--{} '{}': the range's end is below its start", which, text));
  }
  if (which == "output" && s.lo < 1) throw ConfigError(fmt::format("--output '{}': a request generates >= 1 token", text));
  if (which == "input" && s.lo < 1) throw ConfigError(fmt::format("--input '{}': a prompt has >= 1 token", text));
  return s;
}

int32_t draw_length(const LengthSpec& s, std::mt19937_64& rng) {
  if (s.kind == "fixed") return static_cast<int32_t>(s.lo);
  if (s.kind == "uniform")
    return static_cast<int32_t>(s.lo + static_cast<int64_t>(draw::uniform01(rng) * static_cast<double>(s.hi - s.lo + 1)));
  const double v = std::exp(s.mu + s.sigma * draw::normal(rng));
  return static_cast<int32_t>(std::clamp<double>(std::llround(v), s.lo, s.hi));
}

}  // namespace trnsim::workloads
