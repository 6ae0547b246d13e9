// MatMulMX: y [..., N] = A [..., K] @ W, W an MX weight given as its element codes [K, N] and
// E8M0 scales [K/32, N]; A is quantised to MX (attribute mx_activations: mxfp8 or mxfp4) on
// chip. Made by the quantize pass for `--quantize mx... --activations mx...` (Trainium3), never
// imported; lowered on TensorE's MX path (lower_mx_matmul.h), split across cores by 128-row
// tiles and column blocks.
#include "trnsim/compiler/core_split.h"
#include "trnsim/compiler/lower_mx_matmul.h"
#include "trnsim/compiler/op_unit.h"
#include "trnsim/compiler/shape_util.h"
#include "trnsim/common/checked.h"

namespace trnsim::compiler {
namespace {

void infer(Graph& g, const Node& n) {
  const Shape& a = input(g, n, 0).shape;
  const Shape& w = input(g, n, 1).shape;
  const Shape& s = input(g, n, 2).shape;
  if (a.size() < 2 || w.size() != 2 || a.back() != w[0] || w[0] % 32 != 0 || s != Shape{w[0] / 32, w[1]})
    throw ShapeError(fmt::format("node '{}': MatMulMX of {} by codes {} with scales {} (expected [..., K] x [K, N], [K/32, N])", n.name,
                                 shape_str(a), shape_str(w), shape_str(s)));
  Shape out = a;
  out.back() = w[1];
  set_output(g, n, 0, out, input(g, n, 0).type);
}

int64_t work_units(const Graph& g, const Node& n) {
  const Shape& os = g.tensor(n.outputs[0]).shape;
  const int64_t cols = os.back(), rows = numel(os) / std::max<int64_t>(1, cols);
  return ceil_div(rows, 128) * ceil_div(cols, kMinColsPerCore);
}

}  // namespace

void register_matmul_mx(OpRegistry& r) {
  r.push_back({.kind = OpKind::MatMulMx, .name = "MatMulMX", .cls = OpClass::Compute, .min_inputs = 3, .max_inputs = 3,
               .attributes = {"mx_activations"}, .internal = true,
               .rules = {.infer = infer, .lower = lower_mx_matmul, .parallel_units = work_units}});
}

}  // namespace trnsim::compiler
