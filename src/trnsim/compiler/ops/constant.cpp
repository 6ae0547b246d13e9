// Constant (turned into an initializer by the importer, so never a node after import) and
// ConstantOfShape (a constant-filled tensor of a constant shape, folded on the host).
#include <algorithm>

#include "trnsim/common/checked.h"
#include "trnsim/common/limits.h"
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

// The `value` attribute, checked as the spec says: a one-element tensor (a malformed one was a
// std::bad_variant_access).
const TensorInfo* fill_value(const Node& n) {
  auto it = n.attrs.find("value");
  if (it == n.attrs.end()) return nullptr;
  const auto* t = std::get_if<TensorInfo>(&it->second);
  if (!t || !t->data || t->data->size() != 1)
    throw ShapeError(fmt::format("node '{}': ConstantOfShape's value must be a tensor of one element", n.name));
  return t;
}

void infer_of_shape(Graph& g, const Node& n) {
  const TensorInfo* v = fill_value(n);
  const Shape s = const_ints(g, n, 0);
  // Checked and bounded before the host fills it (2^64 elements were accepted).
  const int64_t count = checked_numel(s, fmt::format("node '{}': ConstantOfShape {}", n.name, shape_str(s)));
  check_memory(8.0 * static_cast<double>(count), fmt::format("node '{}': ConstantOfShape {}", n.name, shape_str(s)));
  set_output(g, n, 0, s, v ? v->type : ElemType::Float);
}

void eval_of_shape(Graph& g, const Node& n, std::vector<double>& r) {
  const TensorInfo* v = fill_value(n);
  std::fill(r.begin(), r.end(), v ? v->data->front() : 0.0);
}

}  // namespace

void register_constant(OpRegistry& r) {
  r.push_back({.kind = OpKind::ConstantOfShape, .name = "ConstantOfShape", .cls = OpClass::Shape, .min_inputs = 1, .max_inputs = 1,
               .attributes = {"value"}, .rules = {.infer = infer_of_shape, .eval = eval_of_shape}});
  r.push_back({.kind = OpKind::Constant, .name = "Constant", .cls = OpClass::Shape, .min_inputs = 0, .max_inputs = 0,
               .attributes = {"value", "value_float", "value_floats", "value_int", "value_ints"}, .rules = {}});
}

}  // namespace trnsim::compiler
