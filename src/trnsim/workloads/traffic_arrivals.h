// Open-loop arrival processes: the send times of a benchmark client. Poisson; gamma with a
// burstiness factor (vLLM's benchmark_serving: shape = burstiness, mean 1/rate; 1 is Poisson,
// < 1 burstier); on/off bursts (Poisson at rate/duty during the on periods, nothing in the off
// periods, so the mean rate is `rate`); a linear ramp of the rate from `rate` to `ramp_to`.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace trnsim::workloads {

struct ArrivalSpec {
  std::string process = "poisson";  // poisson | gamma | onoff | ramp
  double rate_qps = 0;
  double burstiness = 1.0;          // gamma shape
  double on_s = 10, off_s = 10;     // onoff periods
  double ramp_to_qps = 0;           // ramp: rate at the end of `ramp_s`
  double ramp_s = 0;                // ramp duration (the run's --duration if 0)
};

// The longest traffic a run takes: the simulator's clock is int64 picoseconds (106 days), so
// arrivals (and a trace's span) are held to 30 days; past it, a ConfigError, never a wrapped clock.
inline constexpr double kMaxTrafficSpanS = 30 * 86400.0;
// Host memory a request costs while a run holds it (arrival, lengths, its record and metrics):
// the estimate behind the memory limit's bound on --requests.
inline constexpr double kHostBytesPerRequest = 512;
// Refuses request `index` arriving at `t` s: past kMaxTrafficSpanS, or past the memory limit.
void check_arrival(double t, int64_t index);

// Checks the spec; a ConfigError naming the field otherwise.
void validate(const ArrivalSpec& spec);

// Arrival times from 0: `count` of them, or (count == 0) all before `duration_s`.
std::vector<double> arrival_times(const ArrivalSpec& spec, int64_t count, double duration_s, std::mt19937_64& rng);

// Names of the processes, for help and errors.
const std::vector<std::string>& arrival_process_names();

}  // namespace trnsim::workloads
