// Resize (nearest, linear; resize_params.h): per resized axis one MatMul by its constant
// [out, in] interpolation matrix: the last axis as x [rows, in] @ M^T, another as M @ x
// [.., in, rest] (batched over the axes before it). Exact selection for nearest; linear's
// weights in fp32.
#include "trnsim/compiler/lower_elementwise.h"
#include "trnsim/compiler/op_unit.h"
#include "trnsim/compiler/resize_params.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

bool decompose(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  Shape cur = shape_of(g, n.inputs[0]);
  const ResizeParams p = resize_params(g, n, cur);
  std::string y = n.inputs[0];
  for (const ResizeAxis& ax : p.axes) {
    const std::vector<double> matrix = resize_matrix(p, ax);
    const size_t a = static_cast<size_t>(ax.axis);
    const int64_t before = numel(Shape(cur.begin(), cur.begin() + static_cast<long>(a)));
    const int64_t after = numel(Shape(cur.begin() + static_cast<long>(a) + 1, cur.end()));
    if (after == 1) {
      std::vector<double> mt(matrix.size());
      for (int64_t i = 0; i < ax.out; ++i)
        for (int64_t j = 0; j < ax.in; ++j) mt[static_cast<size_t>(j * ax.out + i)] = matrix[static_cast<size_t>(i * ax.in + j)];
      y = reshape(e, n.name + ".rows", y, {before, ax.in});
      y = e.add(OpKind::MatMul, n.name + ".interp", {y, e.constant("interpT", {ax.in, ax.out}, mt)});
    } else {
      y = reshape(e, n.name + ".rows", y, {before, ax.in, after});
      y = e.add(OpKind::MatMul, n.name + ".interp", {e.constant("interp", {ax.out, ax.in}, matrix), y});
    }
    cur[a] = ax.out;
  }
  finish(e, n, y);
  return true;
}

}  // namespace

void register_resize(OpRegistry& r) {
  r.push_back({.kind = OpKind::Resize, .name = "Resize", .cls = OpClass::Movement, .min_inputs = 2, .max_inputs = 4,
               .attributes = {"mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
                              "extrapolation_value", "antialias", "axes", "keep_aspect_ratio_policy"},
               .rules = {.infer = [](Graph& g, const Node& n) {
                           set_output(g, n, 0, resize_params(g, n, input(g, n, 0).shape).out, input(g, n, 0).type);
                         },
                         .decompose = decompose, .lower = lower_movement}});
}

}  // namespace trnsim::compiler
