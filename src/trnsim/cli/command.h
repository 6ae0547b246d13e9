// Each `trnsim <subcommand>` lives in its own file and registers itself here. A subcommand
// parses its options with CLI11 and returns an exit code; errors are thrown as trnsim::Error
// and printed by main() as one line, "trnsim: error: ...".
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace trnsim::cli {

struct Command {
  std::string name;
  // Adds the subcommand's options to `sub` and returns what runs when it is chosen.
  std::function<std::function<int()>(CLI::App& sub)> setup;
  std::string description;
};

std::vector<Command>& registry();

struct Register {
  Register(Command c) { registry().push_back(std::move(c)); }
};

}  // namespace trnsim::cli
