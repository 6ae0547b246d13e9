#include "trnsim/workloads/traffic_workload.h"

#include <fmt/core.h>

#include "trnsim/common/error.h"
#include "trnsim/common/limits.h"
#include "trnsim/workloads/traffic_arrivals.h"
#include "trnsim/workloads/traffic_random.h"

namespace trnsim::workloads {

RequestSource::RequestSource(const TrafficOptions& opt, int64_t max_context)
    : opt_(opt), max_context_(max_context), rng_(opt.seed) {
  const int modes = (opt.arrivals.rate_qps > 0) + (opt.concurrency > 0) + opt.offline + !opt.trace.empty();
  if (modes != 1)
    throw ConfigError("traffic: give exactly one of --rate QPS, --concurrency N, --offline or --trace FILE.csv");
  if (opt.requests < 0) throw ConfigError(fmt::format("--requests {}: expected >= 0", opt.requests));
  if (opt.duration_s < 0) throw ConfigError(fmt::format("--duration {}: expected >= 0", opt.duration_s));
  if (opt.duration_s > kMaxTrafficSpanS)
    throw ConfigError(fmt::format("--duration {}: at most {:.0f} s (30 days; the simulator's clock)", opt.duration_s,
                                  kMaxTrafficSpanS));
  check_memory(static_cast<double>(opt.requests) * kHostBytesPerRequest, fmt::format("--requests {}", opt.requests),
               "send fewer requests");
  if (opt.requests == 0 && opt.duration_s == 0 && opt.trace.empty())
    throw ConfigError("traffic: give --requests N or --duration S (how long the run sends)");
  if (opt.offline && opt.requests == 0) throw ConfigError("--offline: give --requests N (all queued at time 0)");
  if (opt.prefix_groups > 0 && (opt.prefix_tokens <= 0 || opt.prefix_tokens >= opt.input.lo))
    throw ConfigError(fmt::format("--prefix-tokens {}: expected 0 < prefix < the shortest prompt ({})",
                                  opt.prefix_tokens, opt.input.lo));
  if (!(opt.trace_speedup > 0)) throw ConfigError("--trace-speedup: expected > 0");
  if (!opt.trace.empty()) trace_ = read_azure_trace(opt.trace);
  const int64_t longest = opt.input.hi + opt.output.hi;
  if (opt.trace.empty() && max_context_ > 0 && longest > max_context_)
    throw ConfigError(fmt::format("--input {} with --output {}: up to {} tokens, past the model's context of {}",
                                  opt.input.describe(), opt.output.describe(), longest, max_context_));
}

void RequestSource::check(const Request& r, int64_t row) const {
  if (r.output < 1)
    throw ConfigError(fmt::format("trace {}: row {}, GeneratedTokens is 0; a request generates >= 1 token", opt_.trace, row));
  if (r.input < 1)
    throw ConfigError(fmt::format("trace {}: row {}, ContextTokens is 0; a prompt has >= 1 token", opt_.trace, row));
  if (max_context_ > 0 && r.input + r.output > max_context_)
    throw ConfigError(fmt::format("trace {}: row {}, ContextTokens {} + GeneratedTokens {} = {} is past the model's "
                                  "context of {} tokens", opt_.trace, row, r.input, r.output, r.input + r.output,
                                  max_context_));
}

Request RequestSource::draw(double arrival) {
  Request r;
  r.arrival_s = arrival;
  r.input = draw_length(opt_.input, rng_);
  r.output = draw_length(opt_.output, rng_);
  if (opt_.prefix_groups > 0) {
    r.prefix_group = static_cast<int32_t>(rng_() % static_cast<uint64_t>(opt_.prefix_groups));
    r.prefix = opt_.prefix_tokens;
  }
  return r;
}

std::vector<Request> RequestSource::all() {
  std::vector<Request> out;
  if (!trace_.empty()) {
    // Cycled: each pass starts one mean gap after the previous pass's last row.
    const auto n = static_cast<int64_t>(trace_.size());
    const double span = trace_.back().time_s + (n > 1 ? trace_.back().time_s / (n - 1) : 1.0);
    const int64_t count = opt_.requests > 0 ? opt_.requests : n;
    out.reserve(count);
    for (int64_t i = 0; i < count; ++i) {
      const TraceRow& t = trace_[i % n];
      Request r;
      r.arrival_s = (t.time_s + static_cast<double>(i / n) * span) / opt_.trace_speedup;
      if (opt_.duration_s > 0 && r.arrival_s >= opt_.duration_s) break;
      check_arrival(r.arrival_s, i);
      r.input = t.input, r.output = t.output;
      check(r, i % n + 2);
      out.push_back(r);
    }
    return out;
  }
  std::vector<double> times;
  if (opt_.offline)
    times.assign(opt_.requests, 0.0);
  else
    times = arrival_times(opt_.arrivals, opt_.requests, opt_.duration_s, rng_);
  out.reserve(times.size());
  for (double t : times) out.push_back(draw(t));
  return out;
}

bool RequestSource::next(double now, int64_t sent, Request& out) {
  if (opt_.requests > 0 && sent >= opt_.requests) return false;
  if (opt_.duration_s > 0 && now >= opt_.duration_s) return false;
  out = draw(now);
  return true;
}

}  // namespace trnsim::workloads
