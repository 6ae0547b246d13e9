// Resize (opsets 10-19, modes nearest and linear): the output shape and, per resized axis, the
// [out, in] interpolation matrix, read once from the attributes and the constant scales/sizes.
// Shape inference and the decomposition (a MatMul by each axis' matrix) both use it.
#pragma once
#include <vector>

#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

struct ResizeAxis {
  int64_t axis = 0, in = 0, out = 0;
  std::vector<double> matrix;  // [out, in] row-major: output i = sum_j matrix[i, j] x[j]
};

struct ResizeParams {
  Shape out;
  std::vector<ResizeAxis> axes;  // only the axes whose size or sampling changes
};

// UnsupportedError names the attribute for what is not implemented (cubic, tf_crop_and_resize,
// antialiased downsampling, keep_aspect_ratio_policy other than stretch); a scales or sizes
// input computed at run time is a ConstantRequiredError.
ResizeParams resize_params(const Graph& g, const Node& n, const Shape& in);

}  // namespace trnsim::compiler
