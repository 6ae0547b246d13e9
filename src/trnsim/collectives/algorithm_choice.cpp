#include "trnsim/collectives/algorithm_choice.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"

namespace trnsim::collectives {
namespace {
int64_t transfers_per_step(const ISchedule& s) { return s.steps() ? s.transfers() / s.steps() : 0; }
}  // namespace

TimedChoice choose_and_time(const CollectiveJob& job, ScheduleTimer& timer, const std::string& name,
                            int64_t buffer_bytes, int64_t mesh_max_bytes) {
  if (!name.empty() && name != "auto") {
    const ICollectiveAlgorithm& a = algorithm(name);
    if (auto why = a.why_not(job); !why.empty()) throw UnsupportedError(why);
    auto schedule = a.schedule(job);
    if (transfers_per_step(*schedule) > kMaxTransfersPerStep)
      throw UnsupportedError(fmt::format("{} on {} ranks moves {} transfers per step, more than trnsim times ({}); "
                                         "use fewer ranks (for all-reduce: hierarchical)",
                                         name, job.ranks(), transfers_per_step(*schedule), kMaxTransfersPerStep));
    if (schedule->transfers() > kMaxTransfers)
      throw UnsupportedError(fmt::format("{} on {} ranks moves {} transfers, more than trnsim times ({}); "
                                         "use fewer ranks or a hierarchical algorithm",
                                         name, job.ranks(), schedule->transfers(), kMaxTransfers));
    return {&a, timer.time(*schedule)};
  }
  TimedChoice best;
  std::vector<std::string> reasons;
  for (const std::string& n : algorithm_names()) {
    const ICollectiveAlgorithm& a = algorithm(n);
    if (mesh_max_bytes > 0 && n == "direct" && buffer_bytes > mesh_max_bytes) {
      reasons.push_back(fmt::format("direct: {} B is above the mesh size class ({} B)", buffer_bytes, mesh_max_bytes));
      continue;
    }
    if (auto why = a.why_not(job); !why.empty()) {
      reasons.push_back(why);
      continue;
    }
    auto schedule = a.schedule(job);
    if (schedule->transfers() > kAutoTransferBudget) {
      reasons.push_back(fmt::format("{}: {} transfers, too many to time automatically", n, schedule->transfers()));
      continue;
    }
    ScheduleTiming t = timer.time(*schedule);
    if (!best.algorithm || t.total < best.timing.total) best = {&a, t};
  }
  if (!best.algorithm)
    throw UnsupportedError(fmt::format("no algorithm can run {} on {} ranks: {}", collectives::name(job.op),
                                       job.ranks(), fmt::join(reasons, "; ")));
  return best;
}

}  // namespace trnsim::collectives
