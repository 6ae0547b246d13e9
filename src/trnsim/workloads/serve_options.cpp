#include "trnsim/workloads/serve_options.h"

#include <fmt/core.h>

#include <charconv>
#include <cmath>

#include "trnsim/common/error.h"

namespace trnsim::workloads {
namespace {

double number(const std::string& s, const std::string& what) {
  double v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v))
    throw ConfigError(fmt::format("{}: '{}' is not a number", what, s));
  return v;
}

// "250ms", "2s", "0.2" (seconds).
double seconds(std::string s, const std::string& what) {
  double scale = 1;
  if (s.size() > 2 && s.ends_with("ms")) scale = 1e-3, s.resize(s.size() - 2);
  else if (s.size() > 1 && s.ends_with("s")) s.pop_back();
  const double v = number(s, what) * scale;
  if (!(v > 0)) throw ConfigError(fmt::format("{}: expected a positive time", what));
  return v;
}

}  // namespace

SloOptions parse_slo(const std::string& text) {
  // MLPerf Inference v5.0 Llama-2-70B latency limits (mlcommons.org/benchmarks/inference-datacenter,
  // "Llama2-70B server: TTFT 2 s, TPOT 200 ms; interactive: TTFT 450 ms, TPOT 40 ms").
  if (text == "mlperf-server") return {text, 2.0, 0.2};
  if (text == "mlperf-interactive") return {text, 0.45, 0.04};
  SloOptions s{"custom", 0, 0};
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    if (eq == std::string::npos || (key != "ttft" && key != "tpot"))
      throw ConfigError(fmt::format("--slo '{}': expected mlperf-server, mlperf-interactive or ttft=2s,tpot=200ms", text));
    (key == "ttft" ? s.ttft_s : s.tpot_s) = seconds(item.substr(eq + 1), "--slo " + key);
    pos = comma + 1;
  }
  return s;
}

FailureEvent parse_failure(const std::string& text) {
  FailureEvent f;
  const auto err = [&] {
    return ConfigError(fmt::format("--fail '{}': expected replica[:I]@T, chip[:I]@T, link[:I]@T[+D] or "
                                   "degrade[:I]=F@T[+D] (T, D in seconds, F the bandwidth fraction left)", text));
  };
  const size_t at = text.find('@');
  if (at == std::string::npos) throw err();
  std::string head = text.substr(0, at), tail = text.substr(at + 1);
  if (const size_t eq = head.find('='); eq != std::string::npos) {
    f.fraction = number(head.substr(eq + 1), "--fail fraction");
    head.resize(eq);
  }
  if (const size_t colon = head.find(':'); colon != std::string::npos) {
    f.replica = static_cast<int>(number(head.substr(colon + 1), "--fail replica"));
    head.resize(colon);
  }
  f.what = head;
  if (f.what != "replica" && f.what != "chip" && f.what != "link" && f.what != "degrade") throw err();
  if (const size_t plus = tail.find('+'); plus != std::string::npos) {
    f.for_s = number(tail.substr(plus + 1), "--fail duration");
    tail.resize(plus);
  }
  f.at_s = number(tail, "--fail time");
  if (f.at_s < 0 || f.replica < 0) throw err();
  if (!(f.fraction > 0 && f.fraction <= 1))
    throw ConfigError(fmt::format("--fail '{}': the bandwidth fraction must be in (0, 1]", text));
  return f;
}

}  // namespace trnsim::workloads
