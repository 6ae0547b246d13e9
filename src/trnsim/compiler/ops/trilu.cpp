// Trilu: the upper (upper = 1) or lower triangle of the last two axes, from diagonal k on;
// a Where with a constant mask (exact). k must be constant.
#include "trnsim/compiler/filled.h"
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

// Whether element (i, j) of the last two axes is kept.
bool kept(const Node& n, int64_t k, int64_t i, int64_t j) { return n.i("upper", 1) ? j - i >= k : j - i <= k; }

int64_t diagonal(const Graph& g, const Node& n) { return const_int_scalar(g, n, 1, 0); }

void infer(Graph& g, const Node& n) {
  if (input(g, n, 0).shape.size() < 2)
    throw ShapeError(fmt::format("node '{}': Trilu needs an input of rank >= 2, got {}", n.name, shape_str(input(g, n, 0).shape)));
  diagonal(g, n);  // constant, or a ConstantRequiredError naming it
  infer_same(g, n);
}

void eval(Graph& g, const Node& n, std::vector<double>& r) {
  const Shape& s = input(g, n, 0).shape;
  const int64_t rows = s[s.size() - 2], cols = s.back(), k = diagonal(g, n);
  const auto& x = data(g, n.inputs[0]);
  for (size_t i = 0; i < r.size(); ++i) {
    const auto e = static_cast<int64_t>(i) % (rows * cols);
    r[i] = kept(n, k, e / cols, e % cols) ? x[i] : 0.0;
  }
}

bool decompose(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape s = decomp::shape_of(g, n.inputs[0]);
  if (numel(s) == 0) {  // an empty result: a constant with no elements
    g.tensor(n.outputs[0]).data = std::vector<double>{};
    return true;
  }
  const int64_t rows = s[s.size() - 2], cols = s.back(), k = diagonal(g, n);
  std::vector<double> mask = filled(rows * cols, 0.0, fmt::format("node '{}': mask [{},{}]", n.name, rows, cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) mask[static_cast<size_t>(i * cols + j)] = kept(n, k, i, j) ? 1 : 0;
  const ElemType t = g.tensor(n.inputs[0]).type;
  std::string m = e.constant(n.name + ".mask", {rows, cols}, mask, ElemType::Bool);
  decomp::finish(e, n, e.add(OpKind::Where, n.name, {m, n.inputs[0], e.constant(n.name + ".zero", {}, {0.0}, t)}));
  return true;
}

}  // namespace

void register_trilu(OpRegistry& r) {
  r.push_back({.kind = OpKind::Trilu, .name = "Trilu", .cls = OpClass::Movement, .min_inputs = 1, .max_inputs = 2, .attributes = {"upper"},
               .rules = {.infer = infer, .eval = eval, .decompose = decompose}});
}

}  // namespace trnsim::compiler
