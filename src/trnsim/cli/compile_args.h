// The compile options that `trnsim run` and `trnsim compile` share (--dtype, --batch, --cores,
// --dim NAME=SIZE), parsed in one place so both commands accept and refuse the same input.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "trnsim/compiler/compile.h"
#include "trnsim/hw/chip_spec.h"

namespace trnsim::cli {

// Throws trnsim::Error naming the option for a malformed --dim or an unknown --dtype.
compiler::CompileOptions compile_options(const std::string& dtype, int64_t batch, int cores,
                                         const std::vector<std::string>& dims);

// --cores counts logical NeuronCores of --lnc physical cores each (hw/logical_cores.h; lnc 0:
// the chip's default): the physical cores CompileOptions::cores takes (0 stays 0: all of
// them). ConfigError naming the option when the chip has fewer.
int physical_cores(const hw::ChipSpec& chip, int logical_cores, int lnc);

}  // namespace trnsim::cli
