// Every option value is checked against its declared type before CLI11 converts it: CLI11 2.1
// takes an empty value as "keep the default", wraps "-1" into an unsigned option (2^64 - 1),
// saturates past 2^64 and passes nan/inf into a float option, all silently.
#pragma once
#include <CLI/CLI.hpp>

#include <string>

namespace trnsim::cli {

// "" when `value` is a valid value of an option of CLI11 type `type` ("INT", "UINT", "FLOAT",
// "TEXT", ...), else what is wrong with it (without the option's name: CLI11 prefixes it).
std::string option_value_problem(const std::string& type, const std::string& value);

// Adds that check to every option taking a value, in `app` and its subcommands.
void check_option_values(CLI::App& app);

// A value quoted in an error message: at most 40 characters, the rest counted.
std::string quoted_value(const std::string& value);

}  // namespace trnsim::cli
