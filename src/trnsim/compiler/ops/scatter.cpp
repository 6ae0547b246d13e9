// ScatterND and ScatterElements (reduction none, add, max, min): data with the updates written
// at the indexed places. On the chip every update gets its flat position in data viewed as
// [P, R] (ScatterND: P rows of the indexed prefix, R elements each; ScatterElements: one
// element each), a one-hot [U, P] selects where each lands (Where, not a multiply, so inf/NaN
// stay exact), a ReduceSum/Max/Min over the updates combines them, and Where keeps data where
// nothing landed. Exact for none/add of distinct positions, max and min; mul is refused.
#include <cmath>

#include "trnsim/compiler/filled.h"
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

constexpr int64_t kMaxOneHot = int64_t{1} << 26;

std::string reduction(const Node& n) {
  const std::string r = n.s("reduction", "none");
  if (r != "none" && r != "add" && r != "max" && r != "min") unsupported(n, fmt::format("attribute reduction = {}", r));
  return r;
}

int64_t axis_of(const Graph& g, const Node& n) {
  return normalize_axis(n.i("axis", 0), static_cast<int64_t>(input(g, n, 0).shape.size()), n.name);
}

void infer_nd(Graph& g, const Node& n) {
  reduction(n);
  const Shape& d = input(g, n, 0).shape;
  const Shape& i = input(g, n, 1).shape;
  const Shape& u = input(g, n, 2).shape;
  if (i.empty() || i.back() < 1 || i.back() > static_cast<int64_t>(d.size()))
    throw ShapeError(fmt::format("node '{}': ScatterND indices {} for data {}", n.name, shape_str(i), shape_str(d)));
  Shape want(i.begin(), i.end() - 1);
  want.insert(want.end(), d.begin() + i.back(), d.end());
  if (u != want) throw ShapeError(fmt::format("node '{}': ScatterND updates {} (expected {})", n.name, shape_str(u), shape_str(want)));
  infer_same(g, n);
}

void infer_elements(Graph& g, const Node& n) {
  reduction(n);
  const Shape& d = input(g, n, 0).shape;
  const Shape& i = input(g, n, 1).shape;
  const int64_t a = axis_of(g, n);
  if (i != input(g, n, 2).shape || i.size() != d.size())
    throw ShapeError(fmt::format("node '{}': ScatterElements indices {} and updates {} for data {}", n.name, shape_str(i),
                                 shape_str(input(g, n, 2).shape), shape_str(d)));
  for (size_t k = 0; k < d.size(); ++k)
    if (static_cast<int64_t>(k) != a && i[k] > d[k])
      throw ShapeError(fmt::format("node '{}': ScatterElements indices {} exceed data {} on axis {}", n.name, shape_str(i), shape_str(d), k));
  infer_same(g, n);
}

// The common tail: updates [U, R] land at flat rows `pos` [U] of data viewed as [P, R].
void land(GraphEditor& e, const Node& n, const std::string& pos, int64_t U, int64_t P, int64_t R) {
  Graph& g = e.graph();
  if (U * P * R > kMaxOneHot) unsupported(n, fmt::format("{} updates into {} places: one-hot of more than 2^26 elements", U, P));
  const std::string r = reduction(n);
  std::string hit = e.add(OpKind::Equal, n.name + ".hit", {reshape(e, n.name + ".pos", pos, {U, 1}),
                                                           iota_along(e, n.name + ".place", P, 1, 2, g.tensor(pos).type)});
  std::string landed = reduce_over(e, OpKind::ReduceMax, n.name + ".landed", e.add(OpKind::Where, n.name + ".count", {hit, e.constant(n.name + ".one", {}, {1.0}), e.constant(n.name + ".zero", {}, {0.0})}), {0}, false);
  landed = e.add(OpKind::Greater, n.name + ".any", {reshape(e, n.name + ".any", landed, {P, 1}), e.constant(n.name + ".zero", {}, {0.0})});
  // The fill takes the updates' element type (int64 updates: MoE routing); integers get finite bounds.
  const ElemType ut = g.tensor(n.inputs[2]).type;
  const double big = is_integral(ut) ? 16777216.0 : INFINITY;  // integers on the chip: |x| <= 2^24
  const double fill = r == "max" ? -big : r == "min" ? big : 0.0;
  std::string upd = reshape(e, n.name + ".updates", n.inputs[2], {U, 1, R});
  std::string sel = e.add(OpKind::Where, n.name + ".select", {reshape(e, n.name + ".hit", hit, {U, P, 1}), upd,
                                                               e.constant(n.name + ".fill", {}, {fill}, ut)});
  const OpKind combine = r == "max" ? OpKind::ReduceMax : r == "min" ? OpKind::ReduceMin : OpKind::ReduceSum;
  std::string c = reduce_over(e, combine, n.name + ".combine", sel, {0}, false);  // [P, R]
  std::string data = reshape(e, n.name + ".data", n.inputs[0], {P, R});
  if (r == "add") c = e.add(OpKind::Add, n.name + ".add", {data, c});
  else if (r == "max") c = e.add(OpKind::Max, n.name + ".max", {data, c});
  else if (r == "min") c = e.add(OpKind::Min, n.name + ".min", {data, c});
  finish(e, n, e.add(OpKind::Where, n.name, {landed, c, data}));
}

bool decompose_nd(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape ds = shape_of(g, n.inputs[0]), is = shape_of(g, n.inputs[1]);
  const int64_t k = is.back();
  const Shape prefix(ds.begin(), ds.begin() + k);
  const int64_t P = numel(prefix), R = numel(Shape(ds.begin() + k, ds.end())), U = numel(is) / k;
  if (U == 0 || numel(ds) == 0) {
    finish(e, n, n.inputs[0]);
    return true;
  }
  std::string pos = flat_positions(e, n.name + ".position", n.inputs[1], prefix);
  land(e, n, pos, U, P, R);
  return true;
}

bool decompose_elements(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape ds = shape_of(g, n.inputs[0]), is = shape_of(g, n.inputs[1]);
  const int64_t a = axis_of(g, n), rank = static_cast<int64_t>(ds.size()), U = numel(is), P = numel(ds);
  if (U == 0 || P == 0) {
    finish(e, n, n.inputs[0]);
    return true;
  }
  const ElemType it = g.tensor(n.inputs[1]).type;
  const auto st = row_major_strides(ds);
  // Flat position: the wrapped index times the axis's stride, plus the other coordinates'.
  std::vector<double> base = filled(U, 0.0, fmt::format("node '{}': the flat positions of its {} indices", n.name, U));
  for (int64_t u = 0; u < U; ++u) {
    int64_t rem = u, off = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      const int64_t c = rem % is[static_cast<size_t>(d)];
      rem /= is[static_cast<size_t>(d)];
      if (d != a) off += c * st[static_cast<size_t>(d)];
    }
    base[static_cast<size_t>(u)] = static_cast<double>(off);
  }
  std::string idx = n.inputs[1];
  std::string zero = e.constant(n.name + ".zero", {}, {0.0}, it);
  std::string neg = e.add(OpKind::Less, n.name + ".negative", {idx, zero});
  idx = e.add(OpKind::Add, n.name + ".index", {idx, e.add(OpKind::Where, n.name + ".wrap", {neg, e.constant(n.name + ".size", {}, {static_cast<double>(ds[static_cast<size_t>(a)])}, it), zero})});
  idx = e.add(OpKind::Mul, n.name + ".stride", {idx, e.constant(n.name + ".stride", {}, {static_cast<double>(st[static_cast<size_t>(a)])}, it)});
  std::string pos = e.add(OpKind::Add, n.name + ".position", {idx, e.constant(n.name + ".base", is, base, it)});
  land(e, n, pos, U, P, 1);
  return true;
}

OpInfo row(OpKind k, std::string_view name, void (*infer)(Graph&, const Node&), bool (*d)(GraphEditor&, const Node&),
           std::vector<std::string_view> attrs) {
  return {.kind = k, .name = name, .cls = OpClass::Movement, .min_inputs = 3, .max_inputs = 3, .attributes = std::move(attrs),
          .rules = {.infer = infer, .decompose = d}};
}

}  // namespace

void register_scatter(OpRegistry& r) {
  r.push_back(row(OpKind::ScatterND, "ScatterND", infer_nd, decompose_nd, {"reduction"}));
  r.push_back(row(OpKind::ScatterElements, "ScatterElements", infer_elements, decompose_elements, {"axis", "reduction"}));
}

}  // namespace trnsim::compiler
