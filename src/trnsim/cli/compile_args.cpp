#include "trnsim/cli/compile_args.h"

#include <cstdlib>

#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/hw/logical_cores.h"

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

int physical_cores(const hw::ChipSpec& chip, int logical_cores, int lnc) {
  const int l = hw::resolve_lnc(chip, lnc);
  const int available = chip.neuron_cores / l;
  if (logical_cores < 0 || logical_cores > available)
    throw ConfigError(fmt::format("--cores {}: {} has {} logical NeuronCores at lnc {} ({} physical)", logical_cores, chip.name, available, l,
                                  chip.neuron_cores));
  return logical_cores * l;
}

}  // namespace trnsim::cli
