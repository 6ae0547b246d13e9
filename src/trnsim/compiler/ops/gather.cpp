// Gather along an axis: with run-time indices on axis 0, an indirect DMA per 128 indices
// (lower_gather: an embedding lookup), split across cores by those tiles; another axis is moved
// first by Transposes; a few constant indices become Slices.
#include "trnsim/compiler/lower_matmul.h"
#include "trnsim/compiler/op_unit.h"
#include "trnsim/common/checked.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

void infer(Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  if (x.empty())  // ONNX: data of rank >= 1 (fuzz finding: a scalar's axis 0 read past the shape)
    throw ShapeError(fmt::format("node '{}': Gather of rank-0 data (a scalar has no axis)", n.name));
  int64_t a = normalize_axis(n.i("axis", 0), static_cast<int64_t>(x.size()), n.name);
  Shape s(x.begin(), x.begin() + a);
  for (auto d : input(g, n, 1).shape) s.push_back(d);
  s.insert(s.end(), x.begin() + a + 1, x.end());
  set_output(g, n, 0, s, input(g, n, 0).type);
}

void eval(Graph& g, const Node& n, std::vector<double>& r) {
  const Shape& xs = input(g, n, 0).shape;
  const auto rank = static_cast<int64_t>(xs.size());
  int64_t a = normalize_axis(n.i("axis", 0), rank, n.name);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < a; ++d) outer *= xs[d];
  for (int64_t d = a + 1; d < rank; ++d) inner *= xs[d];
  const auto& x = data(g, n.inputs[0]);
  const auto& idx = data(g, n.inputs[1]);
  const int64_t ni = static_cast<int64_t>(idx.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < ni; ++j) {
      int64_t k = static_cast<int64_t>(idx[j]);
      if (k < 0) k += xs[a];
      if (k < 0 || k >= xs[a]) throw ShapeError(fmt::format("node '{}': gather index {} out of range {}", n.name, idx[j], xs[a]));
      for (int64_t c = 0; c < inner; ++c) r[static_cast<size_t>((o * ni + j) * inner + c)] = x[static_cast<size_t>((o * xs[a] + k) * inner + c)];
    }
}

bool decompose(GraphEditor& e, const Node& n) {
  const Graph& g = e.graph();
  if (g.is_const(n.inputs[1]) && !g.is_const(n.inputs[0]) && numel(shape_of(g, n.inputs[1])) <= 64) gather(e, n);
  else if (normalize_axis(n.i("axis", 0), static_cast<int64_t>(shape_of(g, n.inputs[0]).size()), n.name) != 0) gather_other_axis(e, n);
  else return false;
  return true;
}

int64_t work_units(const Graph& g, const Node& n) {  // an indirect DMA per 128 indices
  if (n.i("axis", 0) != 0 || g.is_const(n.inputs[1])) return 1;
  return ceil_div(numel(g.tensor(n.inputs[1]).shape), 128);
}

}  // namespace

void register_gather(OpRegistry& r) {
  r.push_back({.kind = OpKind::Gather, .name = "Gather", .cls = OpClass::Movement, .min_inputs = 2, .max_inputs = 2, .attributes = {"axis"},
               .rules = {.infer = infer, .eval = eval, .decompose = decompose, .lower = lower_gather, .parallel_units = work_units}});
}

}  // namespace trnsim::compiler
