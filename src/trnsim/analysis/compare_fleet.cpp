#include "trnsim/analysis/compare_fleet.h"

#include "trnsim/workloads/serve_run.h"

namespace trnsim::analysis {

namespace {
nlohmann::json serve_at(nlohmann::json values, int replicas) {
  values["replicas"] = replicas;
  return workloads::run_serve(workloads::serve_spec_from_json(values)).result;
}
}  // namespace

SizedFleet size_fleet(const nlohmann::json& values, double attainment, int max_replicas) {
  SizedFleet f;
  auto trial = [&](int n) {
    nlohmann::json r = serve_at(values, n);
    const double a = r.value("slo_attainment", 0.0);
    f.trials.push_back({{"replicas", n}, {"slo_attainment", a}});
    return std::pair{a >= attainment, r};
  };
  if (values.contains("replicas")) {
    // As the serve spec reads it: a number from Python, a string from the command line.
    auto [ok, r] = trial(workloads::serve_spec_from_json(values).options.cluster.replicas);
    f.met = ok;
    f.result = r;
    return f;
  }
  int lo = 0, hi = 1;  // lo fails (0 trivially), hi is being tried
  for (;;) {
    auto [ok, r] = trial(hi);
    if (ok) {
      f.met = true;
      f.result = r;
      break;
    }
    if (hi >= max_replicas) {
      f.result = r;
      return f;
    }
    lo = hi;
    hi = std::min(2 * hi, max_replicas);
  }
  while (hi - lo > 1) {  // attainment rises with replicas: bisect between a failing and a passing count
    const int mid = lo + (hi - lo) / 2;
    auto [ok, r] = trial(mid);
    if (ok) {
      hi = mid;
      f.result = r;
    } else {
      lo = mid;
    }
  }
  return f;
}

}  // namespace trnsim::analysis
