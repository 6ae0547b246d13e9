// The `trnsim` command: subcommands register themselves (command.h); this file only dispatches
// and turns errors into one readable line and a non-zero exit code.
#include <fmt/core.h>

#include <algorithm>
#include <iostream>

#include "trnsim/cli/command.h"
#include "trnsim/cli/python_handoff.h"
#include "trnsim/common/error.h"

namespace trnsim::cli {
std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}
}  // namespace trnsim::cli

int main(int argc, char** argv) {
  using namespace trnsim::cli;
  set_program_path(argc > 0 ? argv[0] : "");
  CLI::App app{"trnsim: an executable model of a Trainium-class AI system", "trnsim"};
  app.set_version_flag("--version", std::string(TRNSIM_VERSION));
  app.require_subcommand(1);
  auto& cmds = registry();
  std::sort(cmds.begin(), cmds.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
  std::function<int()> chosen;
  for (auto& c : cmds) {
    CLI::App* sub = app.add_subcommand(c.name, c.description);
    auto run = c.setup(*sub);
    sub->callback([&chosen, run] { chosen = run; });
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const trnsim::Error& e) {
    fmt::print(stderr, "trnsim: error: {}\n", e.what());
    return 2;
  }
  try {
    return chosen ? chosen() : 0;
  } catch (const trnsim::Error& e) {
    fmt::print(stderr, "trnsim: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "trnsim: internal error: {}\n", e.what());
    return 3;
  }
}
