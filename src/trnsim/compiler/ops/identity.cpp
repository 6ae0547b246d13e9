// Identity: the input under a new name (a Reshape to the same shape, an alias).
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {

void register_identity(OpRegistry& r) {
  OpInfo i{.kind = OpKind::Identity, .name = "Identity", .cls = OpClass::Unary, .min_inputs = 1, .max_inputs = 1, .attributes = {},
           .rules = unary_rules([](double x, const Node&) { return x; })};
  i.rules.decompose = [](GraphEditor& e, const Node& n) {
    decomp::finish(e, n, n.inputs[0]);
    return true;
  };
  r.push_back(i);
}

}  // namespace trnsim::compiler
