// NonZero: the indices of the non-zero elements, [rank, count]. Its output's shape depends on
// its input's values, so the input must be known at compile time (a constant, a folded
// sub-graph, or a graph input bound by value specialisation); the result is then a constant,
// and the Where/Expand/GatherND that follow it compile with constant operands.
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

std::vector<double> values(const Graph& g, const Node& n) {
  if (!g.is_const(n.inputs[0]))
    throw ConstantRequiredError(fmt::format("unsupported: op NonZero (its output's shape depends on the values of '{}', computed at run time; "
                                            "give the model a fixed shape there, e.g. a mask with Where instead of indices) at node '{}'",
                                            n.inputs[0], n.name),
                                {n.inputs[0]});
  return data(g, n.inputs[0]).values();
}

int64_t count(const std::vector<double>& x) {
  int64_t c = 0;
  for (double v : x) c += v != 0;
  return c;
}

void infer(Graph& g, const Node& n) {
  const Shape& s = input(g, n, 0).shape;
  set_output(g, n, 0, {static_cast<int64_t>(s.size()), count(values(g, n))}, ElemType::Int64);
}

void eval(Graph& g, const Node& n, std::vector<double>& out) {
  const Shape& s = input(g, n, 0).shape;
  const auto& x = values(g, n);
  const int64_t nnz = count(x), rank = static_cast<int64_t>(s.size());
  int64_t k = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == 0) continue;
    int64_t rem = static_cast<int64_t>(i);
    for (int64_t a = rank - 1; a >= 0; --a) {
      out[static_cast<size_t>(a * nnz + k)] = static_cast<double>(rem % s[static_cast<size_t>(a)]);
      rem /= s[static_cast<size_t>(a)];
    }
    ++k;
  }
}

// Past the folding limit of shape inference: the constant is computed here.
bool decompose(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  auto& out = g.tensor(n.outputs[0]);
  std::vector<double> v(static_cast<size_t>(numel(out.shape)));
  eval(g, n, v);
  out.data = std::move(v);
  return true;
}

}  // namespace

void register_nonzero(OpRegistry& r) {
  r.push_back({.kind = OpKind::NonZero, .name = "NonZero", .cls = OpClass::Shape, .min_inputs = 1, .max_inputs = 1,
               .rules = {.infer = infer, .eval = eval, .decompose = decompose}});
}

}  // namespace trnsim::compiler
