// CumSum along a constant axis (exclusive, reverse): on the host a running sum; on the chip a
// log-step scan (Hillis-Steele): ceil(log2 L) rounds of y += y shifted by 1, 2, 4, .. along
// the axis (zeros shifted in), each a Slice, a Concat and an element-wise Add in fp32.
#include "trnsim/compiler/filled.h"
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

int64_t axis_of(const Graph& g, const Node& n) {
  return normalize_axis(const_int_scalar(g, n, 1, 0), static_cast<int64_t>(input(g, n, 0).shape.size()), n.name);
}

void infer(Graph& g, const Node& n) {
  axis_of(g, n);  // constant, or a ConstantRequiredError naming it
  infer_same(g, n);
}

void eval(Graph& g, const Node& n, std::vector<double>& r) {
  const Shape& s = input(g, n, 0).shape;
  const int64_t a = axis_of(g, n), len = s[static_cast<size_t>(a)];
  const int64_t inner = numel(Shape(s.begin() + a + 1, s.end())), outer = len == 0 ? 0 : numel(s) / (len * std::max<int64_t>(inner, 1));
  const bool excl = n.i("exclusive", 0) != 0, rev = n.i("reverse", 0) != 0;
  const auto& x = data(g, n.inputs[0]);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      double acc = 0;
      for (int64_t t = 0; t < len; ++t) {
        const int64_t j = rev ? len - 1 - t : t;
        const size_t at = static_cast<size_t>((o * len + j) * inner + in);
        if (excl) { r[at] = acc; acc += x[at]; }
        else { acc += x[at]; r[at] = acc; }
      }
    }
}

// y shifted by s along axis a (zeros shifted in): towards higher indices, or lower (reverse).
std::string shifted(GraphEditor& e, const Node& n, const std::string& y, int64_t a, int64_t s, bool rev) {
  Shape zs = shape_of(e.graph(), y);
  const int64_t len = zs[static_cast<size_t>(a)];
  zs[static_cast<size_t>(a)] = s;
  std::string z = e.constant(n.name + ".zeros", zs, filled(numel(zs), 0.0, fmt::format("node '{}': zeros {}", n.name, shape_str(zs))), e.graph().tensor(y).type);
  std::string part = rev ? e.add(OpKind::Slice, n.name + ".shift", {y, e.ints("s", {s}), e.ints("e", {len}), e.ints("a", {a})})
                         : e.add(OpKind::Slice, n.name + ".shift", {y, e.ints("s", {0}), e.ints("e", {len - s}), e.ints("a", {a})});
  return e.add(OpKind::Concat, n.name + ".shift", rev ? std::vector<std::string>{part, z} : std::vector<std::string>{z, part}, {{"axis", a}});
}

bool decompose(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape s = shape_of(g, n.inputs[0]);
  const int64_t a = axis_of(g, n), len = s[static_cast<size_t>(a)];
  if (numel(s) == 0) {
    g.tensor(n.outputs[0]).data = std::vector<double>{};
    return true;
  }
  const bool excl = n.i("exclusive", 0) != 0, rev = n.i("reverse", 0) != 0;
  std::string y = n.inputs[0];
  for (int64_t step = 1; step < len; step *= 2) y = e.add(OpKind::Add, n.name, {y, shifted(e, n, y, a, step, rev)});
  if (excl) y = len > 1 ? shifted(e, n, y, a, 1, rev)
                        : e.constant(n.name + ".zeros", s, filled(numel(s), 0.0, fmt::format("node '{}': zeros {}", n.name, shape_str(s))), g.tensor(y).type);
  finish(e, n, y);
  return true;
}

}  // namespace

void register_cumsum(OpRegistry& r) {
  r.push_back({.kind = OpKind::CumSum, .name = "CumSum", .cls = OpClass::Compute, .min_inputs = 2, .max_inputs = 2,
               .attributes = {"exclusive", "reverse"}, .rules = {.infer = infer, .eval = eval, .decompose = decompose}});
}

}  // namespace trnsim::compiler
