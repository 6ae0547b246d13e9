// GatherElements: out[.., j, ..] = data[.., idx[.., j, ..], ..] (j on `axis`); folded on the
// host when constant, else an exact one-hot selection from element-wise ops and a ReduceSum.
#include "trnsim/common/checked.h"
#include "trnsim/compiler/lower_elementwise.h"
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

void infer(Graph& g, const Node& n) {
  if (input(g, n, 1).shape.size() != input(g, n, 0).shape.size())
    throw ShapeError(fmt::format("node '{}': GatherElements indices rank differs from data", n.name));
  if (input(g, n, 0).shape.empty())  // ONNX: data of rank >= 1 (the axis must exist)
    throw ShapeError(fmt::format("node '{}': GatherElements of rank-0 data (a scalar has no axis)", n.name));
  normalize_axis(n.i("axis", 0), static_cast<int64_t>(input(g, n, 0).shape.size()), n.name);
  set_output(g, n, 0, input(g, n, 1).shape, input(g, n, 0).type);
}

void eval(Graph& g, const Node& n, std::vector<double>& r) {
  const Shape& xs = input(g, n, 0).shape;
  const Shape& os = g.tensor(n.outputs[0]).shape;
  const int64_t rank = static_cast<int64_t>(xs.size());
  const int64_t a = normalize_axis(n.i("axis", 0), rank, n.name);
  auto xst = row_major_strides(xs);
  auto ist = row_major_strides(os);
  const auto& x = data(g, n.inputs[0]);
  const auto& idx = data(g, n.inputs[1]);
  for (size_t i = 0; i < r.size(); ++i) {
    int64_t rem = static_cast<int64_t>(i), off = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t c = rem / ist[d];
      rem %= ist[d];
      if (d == a) {
        c = static_cast<int64_t>(idx[i]);
        if (c < 0) c += xs[a];
        if (c < 0 || c >= xs[a]) throw ShapeError(fmt::format("node '{}': index {} out of range {}", n.name, idx[i], xs[a]));
      }
      off += c * xst[d];
    }
    r[i] = x[off];
  }
}

// GatherElements with indices computed at run time: out[.., j, ..] = data[.., idx[.., j, ..], ..]
// (j on `axis`) as an exact one-hot selection: the indices are compared with 0..D-1 along a new
// trailing axis, Where picks the data element (no multiply, so inf/NaN elsewhere stay out) and
// a ReduceSum over that axis adds the one survivor to zeros.
bool decompose(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape xs = shape_of(g, n.inputs[0]), is = shape_of(g, n.inputs[1]);
  const int64_t rank = static_cast<int64_t>(xs.size());
  const int64_t axis = normalize_axis(n.i("axis", 0), rank, n.name);
  const int64_t D = xs[axis];
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && is[d] > xs[d])
      throw ShapeError(fmt::format("node '{}': GatherElements indices {} exceed data {} on axis {}", n.name, shape_str(is), shape_str(xs), d));
  constexpr int64_t kMaxOneHot = int64_t{1} << 26;
  // The product in checked arithmetic: two large factors overflowed int64 (UBSan; fuzz round 8).
  if (checked_mul(numel(is), D, fmt::format("node '{}': GatherElements one-hot", n.name)) > kMaxOneHot)
    throw UnsupportedError(fmt::format("unsupported: op GatherElements (run-time indices {} over an axis of {}: one-hot of more than 2^26 elements) at node '{}'",
                                       shape_str(is), D, n.name));
  if (numel(is) == 0 || D == 0)
    throw UnsupportedError(fmt::format("unsupported: op GatherElements (zero-size input) at node '{}'", n.name));
  // Negative indices count from the end: idx + D * (idx < 0).
  std::string idx = n.inputs[1];
  std::string neg = e.add(OpKind::Less, n.name + ".negative", {idx, e.constant("zero", {}, {0.0}, g.tensor(idx).type)});
  std::string shift = e.add(OpKind::Where, n.name + ".wrap", {neg, e.constant("D", {}, {static_cast<double>(D)}, g.tensor(idx).type),
                                                               e.constant("zero", {}, {0.0}, g.tensor(idx).type)});
  idx = e.add(OpKind::Add, n.name + ".index", {idx, shift});
  Shape ie = is;
  ie.push_back(1);
  std::string idx1 = reshape(e, n.name + ".index", idx, ie);
  std::vector<double> iota(static_cast<size_t>(D));
  for (int64_t k = 0; k < D; ++k) iota[k] = static_cast<double>(k);
  std::string onehot = e.add(OpKind::Equal, n.name + ".onehot", {idx1, e.constant("iota", {D}, iota, g.tensor(idx).type)});
  // data restricted to the indices' extent off the axis, the axis moved last, a 1 in its place.
  std::string x = n.inputs[0];
  std::vector<int64_t> st, en, ax;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && is[d] != xs[d]) { st.push_back(0); en.push_back(is[d]); ax.push_back(d); }
  if (!ax.empty()) x = e.add(OpKind::Slice, n.name + ".extent", {x, e.ints("s", st), e.ints("e", en), e.ints("a", ax)});
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis) perm.push_back(d);
  perm.push_back(axis);
  if (axis != rank - 1) x = transpose(e, n.name + ".axis_last", x, perm);
  Shape xe = is;
  xe[axis] = 1;
  xe.push_back(D);
  x = reshape(e, n.name + ".data", x, xe);
  std::string zero = e.constant("zero", {}, {0.0}, g.tensor(n.inputs[0]).type);
  std::string picked = e.add(OpKind::Where, n.name + ".select", {onehot, x, zero});
  Shape rows = {numel(is), D};
  std::string r = e.add(OpKind::ReduceSum, n.name, {reshape(e, n.name + ".rows", picked, rows)}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}});
  finish(e, n, r);
  return true;
}

}  // namespace

void register_gather_elements(OpRegistry& r) {
  r.push_back({.kind = OpKind::GatherElements, .name = "GatherElements", .cls = OpClass::Movement, .min_inputs = 2, .max_inputs = 2,
               .attributes = {"axis"}, .rules = {.infer = infer, .eval = eval, .decompose = decompose, .lower = lower_movement}});
}

}  // namespace trnsim::compiler
