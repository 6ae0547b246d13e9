// A serving run as the user states it: the model, the deployment and every option, declared
// once in a table (name, help, how it sets the spec) that both `trnsim serve` (one --flag per
// entry) and `trnsim.serve(...)` (one keyword per entry, '_' for '-') read. Values arrive as
// JSON (strings from the command line, numbers or lists from Python) and are checked here.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnsim/workloads/i_step_cost.h"
#include "trnsim/workloads/serve_options.h"

namespace trnsim::workloads {

struct ServeSpec {
  std::string model;
  Deployment deployment;
  ServeOptions options;
  std::string timeline;  // path for the per-bin time series ("" none)
  std::string power_trace;  // added by power2: path for a Chrome trace of the fleet's power ("" none)
  // Added by energy: facility power / IT power for the facility-level figures, and a per-chip
  // power cap (W, 0: none) that throttles the engine clocks (hw::throttle_to_cap).
  double pue = 1.15;
  double power_cap_w = 0;
  std::string power_cap_scope = "chip";  // added by power2: chip | instance | rack (hw::CapScope)
};

enum class OptionKind { Value, Flag, List };

struct ServeOptionInfo {
  std::string name;  // the CLI flag without "--"
  OptionKind kind;
  std::string help;
  std::function<void(ServeSpec&, const nlohmann::json&)> set;
};

const std::vector<ServeOptionInfo>& serve_option_table();
// Every key of `values` (CLI or Python names) applied in table order, then the spec checked.
ServeSpec serve_spec_from_json(const nlohmann::json& values);

}  // namespace trnsim::workloads
