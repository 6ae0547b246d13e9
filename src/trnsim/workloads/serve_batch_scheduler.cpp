// The registry of batch schedulers (i_batch_scheduler.h), by the name --batching takes.
#include <fmt/core.h>

#include "trnsim/common/error.h"
#include "trnsim/workloads/i_batch_scheduler.h"

namespace trnsim::workloads {

std::unique_ptr<IBatchScheduler> make_continuous_scheduler();
std::unique_ptr<IBatchScheduler> make_static_scheduler();

const std::vector<std::string>& batch_scheduler_names() {
  static const std::vector<std::string> names{"continuous", "static"};
  return names;
}

std::unique_ptr<IBatchScheduler> make_batch_scheduler(const std::string& name) {
  if (name == "continuous") return make_continuous_scheduler();
  if (name == "static") return make_static_scheduler();
  throw ConfigError(fmt::format("batching '{}': expected continuous or static", name));
}

}  // namespace trnsim::workloads
