// Tile: each axis repeated; x [d0, .., dn] viewed as [1, d0, .., 1, dn] and broadcast to
// [r0, d0, .., rn, dn] (one strided copy), read back as [r0 d0, .., rn dn].
#include "trnsim/compiler/lower_elementwise.h"
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

void infer(Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  auto reps = const_ints(g, n, 1);
  if (reps.size() != x.size()) throw ShapeError(fmt::format("node '{}': Tile has {} repeats for rank {}", n.name, reps.size(), x.size()));
  Shape s = x;
  for (size_t i = 0; i < x.size(); ++i) {
    if (reps[i] < 0) throw ShapeError(fmt::format("node '{}': Tile repeats must be >= 0", n.name));
    s[i] *= reps[i];
  }
  set_output(g, n, 0, s, input(g, n, 0).type);
}

// Output index i reads the input at i mod the input's size, per axis.
void eval(Graph& g, const Node& n, std::vector<double>& r) {
  const Shape& xs = input(g, n, 0).shape;
  const Shape& os = g.tensor(n.outputs[0]).shape;
  const auto& x = data(g, n.inputs[0]);
  auto xst = row_major_strides(xs);
  for (size_t i = 0; i < r.size(); ++i) {
    int64_t rem = static_cast<int64_t>(i), off = 0;
    for (int64_t a = static_cast<int64_t>(os.size()) - 1; a >= 0; --a) {
      off += (rem % os[a]) % xs[a] * xst[a];
      rem /= os[a];
    }
    r[i] = x[off];
  }
}

bool decompose(GraphEditor& e, const Node& n) {
  const Shape xs = shape_of(e.graph(), n.inputs[0]);
  const auto reps = const_ints(e.graph(), n, 1);
  Shape split, big;
  for (size_t i = 0; i < xs.size(); ++i) {
    split.insert(split.end(), {1, xs[i]});
    big.insert(big.end(), {reps[i], xs[i]});
  }
  if (numel(big) == 0 || numel(xs) == 0) {  // an empty result: a constant with no elements
    auto& out = e.graph().tensor(n.outputs[0]);
    out.data = std::vector<double>{};
    return true;
  }
  std::string y = reshape(e, n.name + ".split", n.inputs[0], split);
  y = e.add(OpKind::Expand, n.name, {y, e.ints("shape", big)});
  finish(e, n, y);
  return true;
}

}  // namespace

void register_tile(OpRegistry& r) {
  r.push_back({.kind = OpKind::Tile, .name = "Tile", .cls = OpClass::Movement, .min_inputs = 2, .max_inputs = 2, .attributes = {},
               .rules = {.infer = infer, .eval = eval, .decompose = decompose, .lower = lower_movement}});
}

}  // namespace trnsim::compiler
