// The pieces the decomposition pass (decompose.cpp) is built from, shared with the
// decompositions of the newer ops (decompose_ops.cpp). Each step appends nodes through the
// GraphEditor; a step for node `n` ends by writing n's outputs (`finish`).
#pragma once
#include <string>
#include <vector>

#include "trnsim/compiler/graph_edit.h"
#include "trnsim/compiler/ir.h"

namespace trnsim::compiler::decomp {

const Shape& shape_of(const Graph& g, const std::string& n);
// The result `from` becomes n's first output through a final Reshape.
std::string finish(GraphEditor& e, const Node& n, const std::string& from);
std::string reshape(GraphEditor& e, const std::string& name, const std::string& x, const Shape& s);
std::string transpose(GraphEditor& e, const std::string& name, const std::string& x, std::vector<int64_t> perm);
void reduce(GraphEditor& e, const Node& n);             // Reduce* over trailing axes
void gather(GraphEditor& e, const Node& n);             // constant indices: slices
void gather_other_axis(GraphEditor& e, const Node& n);  // run-time indices, axis != 0

// decompose_ops.cpp
void pad(GraphEditor& e, const Node& n);
void variadic(GraphEditor& e, const Node& n);
void dropout(GraphEditor& e, const Node& n);
void lrn(GraphEditor& e, const Node& n);
void layernorm_with_stats(GraphEditor& e, const Node& n);
void gather_elements(GraphEditor& e, const Node& n);
void activation(GraphEditor& e, const Node& n);
void slice_reversed(GraphEditor& e, const Node& n);
void tile(GraphEditor& e, const Node& n);
void resize(GraphEditor& e, const Node& n);

}  // namespace trnsim::compiler::decomp
