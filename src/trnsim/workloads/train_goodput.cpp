#include "trnsim/workloads/train_goodput.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "trnsim/common/error.h"

namespace trnsim::workloads {

double job_mtbf_s(const FailureRates& f, double chips, double nodes) {
  for (double h : {f.chip_mtbf_h, f.node_mtbf_h, f.link_mtbf_h})
    if (!(h > 0)) throw ConfigError(fmt::format("train: an MTBF must be positive hours, got {}", h));
  const double rate_per_h = chips / f.chip_mtbf_h + nodes / f.node_mtbf_h + nodes / f.link_mtbf_h;
  return 3600.0 / rate_per_h;
}

double daly_interval_s(double d, double m) {
  if (d >= 2 * m) return m;
  const double x = d / (2 * m);
  return std::sqrt(2 * d * m) * (1 + std::sqrt(x) / 3 + x / 9) - d;
}

double expected_wall_s(double work, double tau, double d, double r, double m) {
  // Daly (2006) eq. 13: each tau of work costs M e^{R/M} (e^{(tau+delta)/M} - 1) on average.
  return m * std::exp(r / m) * std::expm1((tau + d) / m) * work / tau;
}

namespace {

// Time to get through `need` seconds without a failure, paying a restart after each failure
// (failures may also hit a restart).
double attempt(double need, double restart, double m, std::mt19937_64& rng) {
  std::exponential_distribution<double> exp(1.0 / m);
  double wall = 0;
  for (;;) {
    const double t = exp(rng);
    if (t >= need) return wall + need;
    wall += t;
    for (;;) {  // restart until one completes
      const double u = exp(rng);
      if (u >= restart) { wall += restart; break; }
      wall += u;
    }
  }
}

}  // namespace

double simulated_wall_s(double work, double tau, double d, double r, double m, int runs, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const double segments = work / tau;
  const auto whole = int64_t(std::floor(segments));
  const double tail = (segments - double(whole)) * tau;
  double sum = 0;
  for (int i = 0; i < runs; ++i) {
    double wall = 0;
    for (int64_t s = 0; s < whole; ++s) wall += attempt(tau + d, r, m, rng);
    if (tail > 0) wall += attempt(tail + d, r, m, rng);
    sum += wall;
  }
  return sum / runs;
}

std::vector<TimelineEvent> failure_timeline(int64_t steps, double step_s, int64_t every, double ck_s, double restart_s,
                                            std::vector<int64_t> fails) {
  if (every < 1) throw ConfigError("train: the checkpoint interval must be at least one step");
  std::sort(fails.begin(), fails.end());
  fails.erase(std::unique(fails.begin(), fails.end()), fails.end());
  for (int64_t f : fails)
    if (f < 0 || f >= steps)
      throw ConfigError(fmt::format("train: --fail-at {}: expected a step in [0, {})", f, steps));
  std::vector<TimelineEvent> ev;
  double t = 0;
  int64_t step = 0, saved = 0;
  size_t next = 0;
  while (step < steps) {
    if (next < fails.size() && fails[next] == step) {
      t += step_s / 2;  // fails half-way through the step
      ev.push_back({t, "failure", step});
      t += restart_s;
      ev.push_back({t, "restart", saved});
      step = saved;
      ++next;
      continue;
    }
    t += step_s;
    ++step;
    if (step % every == 0 && step < steps) {
      t += ck_s;
      saved = step;
      ev.push_back({t, "checkpoint", step});
    }
  }
  ev.push_back({t, "done", steps});
  return ev;
}

Goodput goodput(double work, double chips, double nodes, const FailureRates& f, const CheckpointModel& ck) {
  Goodput g;
  g.work_s = work;
  g.mtbf_s = job_mtbf_s(f, chips, nodes);
  g.checkpoint_s = ck.bytes / (ck.write_gbps_per_node * 1e9 * nodes);
  g.restart_s = ck.reschedule_s + ck.bytes / (ck.read_gbps_per_node * 1e9 * nodes);
  g.interval_s = ck.interval_s > 0 ? ck.interval_s : daly_interval_s(g.checkpoint_s, g.mtbf_s);
  g.expected_s = expected_wall_s(work, g.interval_s, g.checkpoint_s, g.restart_s, g.mtbf_s);
  // A bounded Monte-Carlo check beside the closed form (at most ~10^5 segments sampled).
  const double segments = work / g.interval_s;
  const int runs = int(std::clamp(1e5 / std::max(segments, 1.0), 1.0, 200.0));
  g.simulated_s = segments <= 1e6 ? simulated_wall_s(work, g.interval_s, g.checkpoint_s, g.restart_s, g.mtbf_s, runs, 42)
                                  : 0.0;
  g.goodput = work / g.expected_s;
  g.lost_fraction = 1 - g.goodput;
  return g;
}

}  // namespace trnsim::workloads
