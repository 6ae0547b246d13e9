// Access to constants (initialisers) for the passes that rewrite weights (quantize, sparsify),
// in one place: how the IR stores a constant's values may change, these helpers should not.
#pragma once
#include <string>
#include <vector>

#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

// The values of constant `name` (row-major), decoded from however the IR holds them.
std::vector<double> const_values(const Graph& g, const std::string& name);
// Replaces the values (and element type) of constant `name` in place; its shape stays.
void set_const_values(Graph& g, const std::string& name, std::vector<double> values, ElemType t);
// Bits per element a constant of type t takes when stored (file and HBM): 4 for fp4, 8 for
// int8 and the fp8 formats (E8M0 scales too), 16 for fp16/bf16, 32 otherwise (fp32 in HBM).
int storage_bits(ElemType t);
// Bytes of every constant a node of `g` reads (inputs and epilogue operands), at storage width.
int64_t constant_bytes(const Graph& g);

}  // namespace trnsim::compiler
