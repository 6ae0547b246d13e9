#include "trnsim/cli/compile_args.h"

#include <cstdlib>

#include "trnsim/common/error.h"

namespace trnsim::cli {

compiler::CompileOptions compile_options(const std::string& dtype, int64_t batch, int cores,
                                         const std::vector<std::string>& dims) {
  compiler::CompileOptions opt;
  opt.policy = compiler::parse_policy(dtype);
  opt.batch = batch;
  opt.cores = cores;
  for (const auto& d : dims) {
    auto eq = d.find('=');
    if (eq == std::string::npos) throw Error("--dim expects NAME=SIZE, got '" + d + "'");
    const std::string value = d.substr(eq + 1);
    char* end = nullptr;
    const long long size = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || size <= 0)
      throw Error("--dim " + d + ": SIZE must be a positive integer, got '" + value + "'");
    opt.dims[d.substr(0, eq)] = size;
  }
  return opt;
}

}  // namespace trnsim::cli
