// The `trnsim` command: subcommands register themselves (command.h); this file only dispatches
// and turns errors into one readable line and a non-zero exit code.
#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <system_error>

#include "trnsim/cli/command.h"
#include "trnsim/cli/option_values.h"
#include "trnsim/cli/python_handoff.h"
#include "trnsim/common/error.h"

namespace trnsim::cli {
std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}
}  // namespace trnsim::cli

namespace {
// CLI11 messages can span lines (e.g. "... not in {a, b}\n"); the promise is one line. A
// message quoting a 100 kB argument is cut in the middle, so that the line stays readable.
std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  while (!s.empty() && s.back() == ' ') s.pop_back();
  constexpr size_t kHead = 1600, kTail = 200;
  if (s.size() > kHead + kTail + 100)
    s = s.substr(0, kHead) + fmt::format(" [... {} bytes ...] ", s.size() - kHead - kTail) + s.substr(s.size() - kTail);
  return s;
}
}  // namespace

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
  check_option_values(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Any other parser error is a usage error: one line, exit 2 (CLI11's own codes are 100+).
    const auto subs = app.get_subcommands();  // the command whose line it was, for its own help
    if (subs.empty() && argc > 1 && argv[1][0] != '-') {  // CLI11 said "A subcommand is required"
      std::string names;
      for (const auto& c : cmds) names += (names.empty() ? "" : ", ") + c.name;
      fmt::print(stderr, "trnsim: error: unknown command {}; the commands are {}\n", quoted_value(argv[1]), names);
      return 2;
    }
    fmt::print(stderr, "trnsim: error: {} (see trnsim {}--help)\n", one_line(e.what()),
               subs.empty() ? "" : subs.front()->get_name() + " ");
    return 2;
  } catch (const trnsim::Error& e) {
    fmt::print(stderr, "trnsim: error: {}\n", one_line(e.what()));
    return 2;
  }
  try {
    const int rc = chosen ? chosen() : 0;
    // Results go to stdout: a write that failed (a full disk, /dev/full) must not exit 0.
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout))
      throw trnsim::Error("writing the output failed (disk full or closed pipe?)");
    return rc;
  } catch (const CLI::Error& e) {
    fmt::print(stderr, "trnsim: error: {}\n", one_line(e.what()));
    return 2;
  } catch (const std::system_error& e) {
    // An operating-system error surfacing from the output (fmt's "cannot write to file: No
    // space left on device"): the environment, not a bug.
    fmt::print(stderr, "trnsim: error: writing the output failed: {}\n", one_line(e.what()));
    return 2;
  } catch (const trnsim::Error& e) {
    fmt::print(stderr, "trnsim: error: {}\n", one_line(e.what()));
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "trnsim: internal error: {}\n", one_line(e.what()));
    return 3;
  }
}
