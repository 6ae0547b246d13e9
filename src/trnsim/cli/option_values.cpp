#include "trnsim/cli/option_values.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace trnsim::cli {

std::string quoted_value(const std::string& value) {
  if (value.size() <= 40) return "'" + value + "'";
  return fmt::format("'{}...' ({} characters)", value.substr(0, 32), value.size());
}

std::string option_value_problem(const std::string& type, const std::string& value) {
  if (value.empty()) return "an empty value: give one, or leave the option out for its default";
  if (type == "UINT") {
    // strtoull would read "-1" as 2^64 - 1 and saturate past 2^64; neither is what was meant.
    const size_t first = value.find_first_not_of(" \t");
    if (first != std::string::npos && (value[first] == '-' || value[first] == '+'))
      return fmt::format("{} has a sign; expected a whole number 0 to 18446744073709551615", quoted_value(value));
    errno = 0;
    char* end = nullptr;
    std::strtoull(value.c_str(), &end, 0);
    if (errno == ERANGE) return fmt::format("{} is past 18446744073709551615 (2^64 - 1)", quoted_value(value));
  } else if (type == "INT") {
    // CLI11 reads an int64 option with strtoll, which saturates past 2^63 - 1 without a word.
    errno = 0;
    char* end = nullptr;
    std::strtoll(value.c_str(), &end, 0);
    if (errno == ERANGE)
      return fmt::format("{} is outside -9223372036854775808 to 9223372036854775807 (int64)", quoted_value(value));
  } else if (type == "FLOAT") {
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (end != value.c_str() && !std::isfinite(v))
      return fmt::format("{} is not a finite number", quoted_value(value));
  }
  return "";
}

void check_option_values(CLI::App& app) {
  for (CLI::Option* o : app.get_options()) {
    if (o->get_type_size_max() == 0) continue;  // a flag
    const std::string type = o->get_type_name();
    o->check(CLI::Validator([type](std::string& v) { return option_value_problem(type, v); }, "", "value"));
  }
  for (CLI::App* sub : app.get_subcommands({})) check_option_values(*sub);
}

}  // namespace trnsim::cli
