// Shape arithmetic shared by shape inference, the host evaluator and the lowering: numpy
// broadcasting, row-major strides, negative-axis normalisation. Errors are ShapeErrors that
// name the node.
#pragma once
#include <string>
#include <vector>

#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& node);
std::vector<int64_t> row_major_strides(const Shape& s);
// Strides (in elements) of a row-major tensor of shape `in` read as broadcast to `out`:
// 0 on broadcast axes; missing leading axes are broadcast.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);
// An axis in ONNX's [-rank, rank-1] as 0..rank-1; a ShapeError naming the node otherwise
// (always for rank 0).
int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& node);

// The [start, end, step) of ONNX Slice along an axis of size `dim`, clamped as the spec says.
struct SliceRange {
  int64_t start = 0, step = 1, count = 0;
};
SliceRange slice_range(int64_t start, int64_t end, int64_t step, int64_t dim);

}  // namespace trnsim::compiler
