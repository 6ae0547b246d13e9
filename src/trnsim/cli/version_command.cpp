// `trnsim version`: the version and the presets compiled in, for bug reports.
#include <fmt/core.h>

#include "trnsim/cli/command.h"
#include "trnsim/hw/presets.h"

namespace trnsim::cli {
namespace {
Register reg{{"version", [](CLI::App&) -> std::function<int()> {
                return [] {
                  fmt::print("trnsim {}\n", TRNSIM_VERSION);
                  for (auto& f : hw::embedded_config_files()) fmt::print("  preset {}\n", f.path);
                  return 0;
                };
              },
              "Print the version and the compiled-in presets"}};
}
}  // namespace trnsim::cli
