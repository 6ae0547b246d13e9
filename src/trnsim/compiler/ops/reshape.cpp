// Reshape (0 copies an axis, -1 is inferred; allowzero): no kernel, the output is an alias of
// the input's bytes. Tensor-parallel when an output axis carries exactly the split block.
#include "trnsim/compiler/op_unit.h"
#include "trnsim/compiler/tp_rules.h"

namespace trnsim::compiler {
namespace {

// Rank r holds block r of axis s: in the flattened layout, the r-th of tp equal chunks of every
// prod(in[s:]) run. An output axis b with the same prefix product carries exactly that block
// when it is split (shape inference checked the element counts agree).
int64_t tp_axis(TpCtx& c) {
  const int64_t s = c.sp(c.n.inputs[0]);
  const Shape& in = c.g.tensor(c.n.inputs[0]).shape;
  const Shape& out = c.out_shape();
  const int64_t prefix = numel(Shape(in.begin(), in.begin() + s));
  int64_t acc = 1;
  for (int64_t b = 0; b < static_cast<int64_t>(out.size()); ++b) {
    if (acc == prefix && out[static_cast<size_t>(b)] > 1) {
      c.shape_rewrites.push_back(c.ni);
      return b;
    }
    acc *= out[static_cast<size_t>(b)];
    if (acc > prefix) break;
  }
  return c.refuse(fmt::format("{} -> {} mixes the split axis {} with others", shape_str(in), shape_str(out), s));
}

}  // namespace

void register_reshape(OpRegistry& r) {
  r.push_back({.kind = OpKind::Reshape, .name = "Reshape", .cls = OpClass::Movement, .min_inputs = 2, .max_inputs = 2, .attributes = {"allowzero"},
               .rules = {.infer = [](Graph& g, const Node& n) { set_output(g, n, 0, reshape_target(g, n, input(g, n, 0).shape), input(g, n, 0).type); },
                         .eval = [](Graph& g, const Node& n, std::vector<double>& r) { r = data(g, n.inputs[0]).values(); },
                         .lower_alias = true,
                         .tp_axis = tp_axis}});
}

}  // namespace trnsim::compiler
