// Value specialisation for models whose shape operands are graph inputs (a Reshape's target
// shape fed as an input, Slice bounds, Expand shapes, ...). compile() refuses them with a
// ConstantRequiredError naming the tensors it needs; when the values are at hand (an .npz of
// inputs), those small integer inputs are bound as constants and the model is compiled again,
// as python/trnsim/compiler.py does for CompiledModel.run.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "trnsim/compiler/compile.h"
#include "trnsim/runtime/npz.h"

namespace trnsim::runtime {

inline constexpr size_t kMaxSpecialisedElements = 64;  // a shape operand, not a data tensor

struct SpecialisedModel {
  compiler::CompiledModel model;
  std::vector<std::string> specialised;  // graph inputs bound to their values, in binding order
};

// Compiles `g` with the arrays' shapes as the input shapes; on a ConstantRequiredError that
// names graph inputs (at most kMaxSpecialisedElements values each: integer shape operands,
// Resize's float scales) present in
// `values`, binds them as constants and compiles again. Other errors, or one naming no such
// input, propagate unchanged.
SpecialisedModel compile_specialised(const compiler::Graph& g, const hw::ChipSpec& chip,
                                     compiler::CompileOptions options,
                                     const std::map<std::string, NpyArray>& values);

}  // namespace trnsim::runtime
