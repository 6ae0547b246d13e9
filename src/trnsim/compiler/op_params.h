// The resolved parameters of ops whose meaning depends on the opset (attributes before,
// constant inputs after) or on defaults: read once here, used by shape inference, the host
// evaluator and the lowering alike, so the three cannot disagree.
#pragma once
#include <vector>

#include "trnsim/compiler/ir.h"
#include "trnsim/compiler/shape_util.h"

namespace trnsim::compiler {

// Values of a constant input (as held: doubles), or of a constant integer input; a
// ConstantRequiredError naming the input if it is computed at run time.
const ConstData& const_values(const Graph& g, const Node& n, size_t input);
std::vector<int64_t> const_ints(const Graph& g, const Node& n, size_t input);
double const_scalar(const Graph& g, const Node& n, size_t input, double def);
// An integer scalar input (CumSum's axis, Trilu's k): const_ints' checks, one value.
int64_t const_int_scalar(const Graph& g, const Node& n, size_t input, int64_t def);

// Reduce*: the sorted, normalised axes (all when none are given and noop_with_empty_axes = 0).
std::vector<int64_t> reduce_axes(const Graph& g, const Node& n, int64_t rank);
bool keepdims(const Node& n);
std::vector<int64_t> transpose_perm(const Node& n, int64_t rank);
// Slice: per axis of the input, the selected range (whole axis when not sliced).
std::vector<SliceRange> slice_ranges(const Graph& g, const Node& n, const Shape& in);
// Unsqueeze/Squeeze axes, normalised against the output rank (Unsqueeze: in_rank + the axes;
// repeated axes refused) or the input rank (Squeeze).
std::vector<int64_t> unsqueeze_axes(const Graph& g, const Node& n, int64_t in_rank);
std::vector<int64_t> squeeze_axes(const Graph& g, const Node& n, const Shape& in);
// Pad: begin and end padding per axis, the mode (constant, edge, reflect, wrap) and the
// constant value; `value_at_run_time` when the value is an input computed at run time (the
// decomposition turns such Pads, and the non-constant modes, into other ops).
struct PadParams {
  std::vector<int64_t> begin, end;
  std::string mode = "constant";
  double value = 0;
  bool value_at_run_time = false;
};
PadParams pad_params(const Graph& g, const Node& n, int64_t rank);
// The same, checked against the input's shape (reflect needs pads < the axis size).
PadParams pad_params(const Graph& g, const Node& n, const Shape& in);
// Pad modes edge / reflect / wrap: the input index an output index i (minus the begin
// padding: j = i - begin, in [-begin, size + end)) reads along an axis of `size`.
int64_t pad_source(const std::string& mode, int64_t j, int64_t size);
// Split: the sizes along the axis.
std::vector<int64_t> split_sizes(const Graph& g, const Node& n, const Shape& in, int64_t axis);
// Conv / MaxPool / AveragePool windows over the spatial axes (x is [N, C, spatial...]):
// strides, dilations and the explicit begin/end padding (auto_pad SAME_UPPER/SAME_LOWER/VALID
// resolved), the output's spatial sizes (ceil_mode applied: a last window may start in the
// input or the begin padding, never in the end padding), and `extra_end`, the padding past
// `pad_end` that ceil_mode's last windows reach (it never counts as input or padding).
struct WindowParams {
  std::vector<int64_t> kernel, strides, dilations, pad_begin, pad_end, extra_end, out;
};
WindowParams window_params(const Node& n, const Shape& x, const std::vector<int64_t>& kernel);
// The output shape of a windowed op (Conv, pooling): [N, channels, spatial out...].
Shape window_output_shape(const Node& n, const Shape& x, const std::vector<int64_t>& kernel, int64_t channels);
// Reshape target with 0 and -1 resolved.
Shape reshape_target(const Graph& g, const Node& n, const Shape& in);

}  // namespace trnsim::compiler
