// Shape (with start/end) and Size: computed on the host from the input's shape, even when its
// values are computed at run time (they never reach the chip).
#include <algorithm>

#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

// [start, end) clamped to the rank.
std::pair<int64_t, int64_t> range(const Node& n, int64_t rank) {
  int64_t b = n.i("start", 0), e = n.i("end", rank);
  if (b < 0) b += rank;
  if (e < 0) e += rank;
  b = std::clamp<int64_t>(b, 0, rank);
  e = std::clamp<int64_t>(e, b, rank);
  return {b, e};
}

void eval_shape(Graph& g, const Node& n, std::vector<double>& r) {
  const Shape& s = input(g, n, 0).shape;
  const int64_t b = range(n, static_cast<int64_t>(s.size())).first;
  for (size_t i = 0; i < r.size(); ++i) r[i] = static_cast<double>(s[b + i]);
}

}  // namespace

void register_shape(OpRegistry& r) {
  r.push_back({.kind = OpKind::Shape, .name = "Shape", .cls = OpClass::Shape, .min_inputs = 1, .max_inputs = 1, .attributes = {"start", "end"},
               .rules = {.infer = [](Graph& g, const Node& n) {
                           auto [b, e] = range(n, static_cast<int64_t>(input(g, n, 0).shape.size()));
                           set_output(g, n, 0, {e - b}, ElemType::Int64);
                         },
                         .eval = eval_shape, .eval_from_shapes = true}});
  r.push_back({.kind = OpKind::Size, .name = "Size", .cls = OpClass::Shape, .min_inputs = 1, .max_inputs = 1, .attributes = {},
               .rules = {.infer = [](Graph& g, const Node& n) { set_output(g, n, 0, {}, ElemType::Int64); },
                         .eval = [](Graph& g, const Node& n, std::vector<double>& r) { r[0] = static_cast<double>(numel(input(g, n, 0).shape)); },
                         .eval_from_shapes = true}});
}

}  // namespace trnsim::compiler
