// Resize (opsets 10-19, modes nearest and linear): the output shape and the resized axes, read
// once from the attributes and the constant scales/sizes (shape inference needs only these),
// and per resized axis the [out, in] interpolation matrix (the decomposition: a MatMul by it).
#pragma once
#include <string>
#include <vector>

#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

struct ResizeAxis {
  int64_t axis = 0, in = 0, out = 0;
  double scale = 1;  // out / in as ONNX defines it (the given scale, or sizes / in)
};

struct ResizeParams {
  Shape out;
  std::vector<ResizeAxis> axes;  // only the axes whose size or sampling changes
  std::string mode, coordinate_mode, nearest_mode;
};

// UnsupportedError names the attribute for what is not implemented (cubic, tf_crop_and_resize,
// antialiased downsampling, keep_aspect_ratio_policy other than stretch); a scales or sizes
// input computed at run time is a ConstantRequiredError.
ResizeParams resize_params(const Graph& g, const Node& n, const Shape& in);

// The axis' [out, in] row-major interpolation matrix: output i = sum_j m[i, j] x[j].
std::vector<double> resize_matrix(const ResizeParams& p, const ResizeAxis& ax);

}  // namespace trnsim::compiler
