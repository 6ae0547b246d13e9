// The compile options that `trnsim run` and `trnsim compile` share (--dtype, --batch, --cores,
// --dim NAME=SIZE), parsed in one place so both commands accept and refuse the same input.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "trnsim/compiler/compile.h"

namespace trnsim::cli {

// Throws trnsim::Error naming the option for a malformed --dim or an unknown --dtype.
compiler::CompileOptions compile_options(const std::string& dtype, int64_t batch, int cores,
                                         const std::vector<std::string>& dims);


}  // namespace trnsim::cli
