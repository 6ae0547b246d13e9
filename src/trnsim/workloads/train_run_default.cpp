// run_train with the shared step-cost model; apart from train_run.cpp so that tests with a
// stand-in cost model link without it.
#include "trnsim/workloads/train_run.h"

namespace trnsim::workloads {

nlohmann::json run_train(const TrainRequest& r) { return run_train(r, make_step_cost); }

}  // namespace trnsim::workloads
