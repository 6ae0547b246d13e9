#include "trnsim/workloads/traffic_arrivals.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "trnsim/common/error.h"
#include "trnsim/common/limits.h"
#include "trnsim/workloads/traffic_random.h"

namespace trnsim::workloads {
namespace {

using draw::exponential;
using draw::uniform01;

bool more(int64_t n, int64_t count, double t, double duration_s) {
  const bool go = count > 0 ? n < count : t < duration_s;
  if (go) check_arrival(t, n);
  return go;
}

}  // namespace

void check_arrival(double t, int64_t index) {
  if (!(t <= kMaxTrafficSpanS))
    throw ConfigError(fmt::format("traffic: request {} would arrive at {:.3g} s, past the {:.0f} s (30 days) a run can "
                                  "simulate; raise --rate (or --trace-speedup) or send fewer requests", index + 1, t,
                                  kMaxTrafficSpanS));
  if ((index & 0xFFFF) == 0xFFFF)  // every 65,536 requests: the memory they take so far
    check_memory(static_cast<double>(index + 1) * kHostBytesPerRequest, fmt::format("traffic of more than {} requests", index),
                 "send fewer requests (--requests, --duration)");
}

const std::vector<std::string>& arrival_process_names() {
  static const std::vector<std::string> names{"poisson", "gamma", "onoff", "ramp"};
  return names;
}

void validate(const ArrivalSpec& s) {
  const auto& n = arrival_process_names();
  if (std::find(n.begin(), n.end(), s.process) == n.end())
    throw ConfigError(fmt::format("arrival process '{}': expected poisson, gamma, onoff or ramp", s.process));
  if (!(s.rate_qps > 0) || !std::isfinite(s.rate_qps))
    throw ConfigError(fmt::format("rate: {} requests/s; expected a positive number", s.rate_qps));
  if (!(s.burstiness > 0)) throw ConfigError(fmt::format("burstiness: {}; expected > 0", s.burstiness));
  if (s.process == "onoff" && (!(s.on_s > 0) || s.off_s < 0))
    throw ConfigError(fmt::format("on/off periods {} s / {} s: expected on > 0 and off >= 0", s.on_s, s.off_s));
  if (s.process == "ramp" && !(s.ramp_to_qps > 0))
    throw ConfigError(fmt::format("ramp-to: {} requests/s; expected a positive number", s.ramp_to_qps));
}

std::vector<double> arrival_times(const ArrivalSpec& s, int64_t count, double duration_s, std::mt19937_64& rng) {
  validate(s);
  std::vector<double> out;
  if (count > 0) out.reserve(count);
  double t = 0;
  if (s.process == "poisson" || s.process == "gamma") {
    const bool gamma = s.process == "gamma" && s.burstiness != 1.0;
    for (;;) {
      t += gamma ? draw::gamma(rng, s.burstiness) / (s.burstiness * s.rate_qps) : exponential(rng, s.rate_qps);
      if (!more(static_cast<int64_t>(out.size()), count, t, duration_s)) break;
      out.push_back(t);
    }
  } else if (s.process == "onoff") {
    // Time runs only during on periods: a Poisson clock of rate/duty mapped onto them.
    const double duty = s.on_s / (s.on_s + s.off_s), period = s.on_s + s.off_s;
    double on_time = 0;
    for (;;) {
      on_time += exponential(rng, s.rate_qps / duty);
      const double k = std::floor(on_time / s.on_s);
      t = k * period + (on_time - k * s.on_s);
      if (!more(static_cast<int64_t>(out.size()), count, t, duration_s)) break;
      out.push_back(t);
    }
  } else {  // ramp: thinning of a Poisson process at the larger rate (Lewis-Shedler)
    const double span = s.ramp_s > 0 ? s.ramp_s : duration_s;
    if (!(span > 0)) throw ConfigError("ramp: needs --ramp-s or --duration (the time over which the rate changes)");
    const double peak = std::max(s.rate_qps, s.ramp_to_qps);
    for (;;) {
      t += exponential(rng, peak);
      const double rate = s.rate_qps + (s.ramp_to_qps - s.rate_qps) * std::min(t / span, 1.0);
      if (uniform01(rng) * peak > rate) continue;
      if (!more(static_cast<int64_t>(out.size()), count, t, duration_s)) break;
      out.push_back(t);
    }
  }
  return out;
}

}  // namespace trnsim::workloads
