// The entry point of `trnsim train` and trnsim.train(): a request (the options by their CLI
// names, snake_case, as a JSON object) in, a "train" result out (time_s = the step). One parser
// for both, so the CLI and Python cannot drift; an unknown or malformed key is a ConfigError
// naming it.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trnsim/workloads/train_goodput.h"
#include "trnsim/workloads/train_step.h"

namespace trnsim::workloads {

struct TrainRequest {
  std::string model;          // a preset of configs/models/ or a config.json path
  TrainConfig config;
  TrainConditions conditions;
  FailureRates failures;
  CheckpointModel checkpoint; // bytes follow from the model
  double tokens = 0;          // > 0: time and goodput to train this many tokens
  int64_t steps = 0;          // > 0: the run length for --fail-at (else from tokens)
  std::vector<int64_t> fail_at;
  double power_cap_w = 0;     // added by energy: > 0: throttle the engine clocks to this chip power
  std::string power_cap_scope = "chip";  // added by power2: chip | instance | rack (hw::CapScope)
};

TrainRequest train_request(const nlohmann::json& j);
// With the shared step-cost model (make_step_cost) by default.
nlohmann::json run_train(const TrainRequest& r);
nlohmann::json run_train(const TrainRequest& r, const StepCostFactory& factory);

}  // namespace trnsim::workloads
