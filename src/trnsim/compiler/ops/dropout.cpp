// Dropout, compiled for inference: the output is the input, the optional mask all true
// (opset 7-11: ratio attribute; 12+: ratio and training_mode inputs, seed attribute).
#include "trnsim/compiler/filled.h"
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

// Training mode with a non-zero ratio draws a random mask that no reference can reproduce, so
// it is refused; training mode with ratio 0 is the identity too.
void dropout_check(const Graph& g, const Node& n) {
  if (n.inputs.size() < 3 || n.inputs[2].empty()) return;
  if (!g.is_const(n.inputs[2]))
    throw ConstantRequiredError(fmt::format("unsupported: op Dropout (input training_mode computed at run time; it must be constant) at node '{}'", n.name), {n.inputs[2]});
  const double training = const_scalar(g, n, 2, 0.0);
  if (training == 0) return;
  double ratio = 0.5;
  if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
    if (!g.is_const(n.inputs[1]))
      throw ConstantRequiredError(fmt::format("unsupported: op Dropout (input ratio computed at run time with training_mode = 1) at node '{}'", n.name), {n.inputs[1]});
    ratio = const_scalar(g, n, 1, 0.5);
  }
  if (ratio != 0)
    throw UnsupportedError(fmt::format("unsupported: op Dropout (attribute training_mode = 1 with ratio = {:g}: random masks) at node '{}'", ratio, n.name));
}

void infer(Graph& g, const Node& n) {
  dropout_check(g, n);
  set_output(g, n, 0, input(g, n, 0).shape, input(g, n, 0).type);
  if (has_output(n, 1)) set_output(g, n, 1, input(g, n, 0).shape, ElemType::Bool);
}

// Inference: every element kept.
void all_true_mask(Graph& g, const Node& n) {
  if (!has_output(n, 1)) return;
  auto& mask = g.tensor(n.outputs[1]);
  mask.data = filled(numel(mask.shape), 1.0, fmt::format("node '{}': mask {}", n.name, shape_str(mask.shape)));
}

void eval(Graph& g, const Node& n, std::vector<double>& r) {
  r = data(g, n.inputs[0]).values();
  all_true_mask(g, n);
}

bool decompose(GraphEditor& e, const Node& n) {
  all_true_mask(e.graph(), n);
  decomp::finish(e, n, n.inputs[0]);
  return true;
}

}  // namespace

void register_dropout(OpRegistry& r) {
  OpInfo i{.kind = OpKind::Dropout, .name = "Dropout", .cls = OpClass::Unary, .min_inputs = 1, .max_inputs = 3, .attributes = {"ratio", "seed"},
           .rules = unary_rules([](double x, const Node&) { return x; })};
  i.rules.infer = infer;
  i.rules.eval = eval;
  i.rules.decompose = decompose;
  r.push_back(i);
}

}  // namespace trnsim::compiler
