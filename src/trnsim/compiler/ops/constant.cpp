// Constant (turned into an initializer by the importer, so never a node after import) and
// ConstantOfShape (a constant-filled tensor of a constant shape, folded on the host).
#include <algorithm>

#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

void infer_of_shape(Graph& g, const Node& n) {
  ElemType t = ElemType::Float;
  if (auto it = n.attrs.find("value"); it != n.attrs.end()) t = std::get<TensorInfo>(it->second).type;
  set_output(g, n, 0, const_ints(g, n, 0), t);
}

void eval_of_shape(Graph& g, const Node& n, std::vector<double>& r) {
  double v = 0;
  if (auto it = n.attrs.find("value"); it != n.attrs.end()) v = std::get<TensorInfo>(it->second).data->at(0);
  std::fill(r.begin(), r.end(), v);
}

}  // namespace

void register_constant(OpRegistry& r) {
  r.push_back({.kind = OpKind::ConstantOfShape, .name = "ConstantOfShape", .cls = OpClass::Shape, .min_inputs = 1, .max_inputs = 1,
               .attributes = {"value"}, .rules = {.infer = infer_of_shape, .eval = eval_of_shape}});
  r.push_back({.kind = OpKind::Constant, .name = "Constant", .cls = OpClass::Shape, .min_inputs = 0, .max_inputs = 0,
               .attributes = {"value", "value_float", "value_floats", "value_int", "value_ints"}, .rules = {}});
}

}  // namespace trnsim::compiler
