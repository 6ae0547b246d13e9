// The resolved parameters of ops whose meaning depends on the opset (attributes before,
// constant inputs after) or on defaults: read once here, used by shape inference, the host
// evaluator and the lowering alike, so the three cannot disagree.
#pragma once
#include <vector>

#include "trnsim/compiler/ir.h"
#include "trnsim/compiler/shape_util.h"

namespace trnsim::compiler {

// Values of a constant integer input; UnsupportedError if it is computed at run time.
std::vector<int64_t> const_ints(const Graph& g, const Node& n, size_t input);
double const_scalar(const Graph& g, const Node& n, size_t input, double def);

// Reduce*: the sorted, normalised axes (all when none are given and noop_with_empty_axes = 0).
std::vector<int64_t> reduce_axes(const Graph& g, const Node& n, int64_t rank);
bool keepdims(const Node& n);
std::vector<int64_t> transpose_perm(const Node& n, int64_t rank);
// Slice: per axis of the input, the selected range (whole axis when not sliced).
std::vector<SliceRange> slice_ranges(const Graph& g, const Node& n, const Shape& in);
// Unsqueeze/Squeeze axes, normalised against the output (Unsqueeze) or input (Squeeze) rank.
std::vector<int64_t> unsqueeze_axes(const Graph& g, const Node& n, int64_t out_rank);
std::vector<int64_t> squeeze_axes(const Graph& g, const Node& n, const Shape& in);
// Pad: begin and end padding per axis, and the constant value (mode "constant" only).
struct PadParams {
  std::vector<int64_t> begin, end;
  double value = 0;
};
PadParams pad_params(const Graph& g, const Node& n, int64_t rank);
// Split: the sizes along the axis.
std::vector<int64_t> split_sizes(const Graph& g, const Node& n, const Shape& in, int64_t axis);
// Reshape target with 0 and -1 resolved.
Shape reshape_target(const Graph& g, const Node& n, const Shape& in);

}  // namespace trnsim::compiler
