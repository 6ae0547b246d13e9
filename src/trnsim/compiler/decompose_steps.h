// The steps the op units' decompositions (OpRules::decompose in compiler/ops/) are built from.
// Each step appends nodes through the GraphEditor; a step for node `n` ends by writing n's
// outputs (`finish`).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "trnsim/compiler/graph_edit.h"
#include "trnsim/compiler/ir.h"
#include "trnsim/compiler/op_params.h"

namespace trnsim::compiler::decomp {

const Shape& shape_of(const Graph& g, const std::string& n);
// The result `from` becomes n's first output through a final Reshape.
std::string finish(GraphEditor& e, const Node& n, const std::string& from);
std::string reshape(GraphEditor& e, const std::string& name, const std::string& x, const Shape& s);
std::string transpose(GraphEditor& e, const std::string& name, const std::string& x, std::vector<int64_t> perm);
// Strided windows of x (already padded) for every kernel offset: Slice on the spatial axes
// (Conv, pooling).
std::vector<std::string> windows(GraphEditor& e, const Node& n, const std::string& x, const Shape& kernel, const Shape& out);
// Pads the spatial axes of x as the window parameters say (begin, end + ceil_mode's extra).
std::string pad_spatial(GraphEditor& e, const Node& n, const std::string& x, const WindowParams& wp, double value);
// Moves `axes` (sorted) of x to the end; returns the transposed tensor and the permutation.
std::pair<std::string, std::vector<int64_t>> axes_last(GraphEditor& e, const Node& n, const std::string& x,
                                                       const std::vector<int64_t>& axes);
void reduce(GraphEditor& e, const Node& n);             // Reduce* over trailing axes
void gather(GraphEditor& e, const Node& n);             // constant indices: slices
void gather_other_axis(GraphEditor& e, const Node& n);  // run-time indices, axis != 0

}  // namespace trnsim::compiler::decomp
