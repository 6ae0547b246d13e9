// Conv (N-d, grouped, dilated, strided, padded): im2col as strided window Slices + Concat and
// one MatMul per group; depthwise convolutions as per-tap scaled windows.
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

void infer(Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  const Shape& w = input(g, n, 1).shape;
  if (x.size() < 3 || w.size() != x.size()) throw ShapeError(fmt::format("node '{}': Conv input {} weight {}", n.name, shape_str(x), shape_str(w)));
  Shape k(w.begin() + 2, w.end());
  auto ks = n.ints("kernel_shape", k);
  if (ks != k) throw ShapeError(fmt::format("node '{}': kernel_shape disagrees with the weight", n.name));
  if (x[1] != w[1] * n.i("group", 1)) throw ShapeError(fmt::format("node '{}': {} input channels, weight expects {} x group", n.name, x[1], w[1]));
  set_output(g, n, 0, window_output_shape(n, x, k, w[0]), input(g, n, 0).type);
}

bool decompose(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape xs = shape_of(g, n.inputs[0]), ws = shape_of(g, n.inputs[1]), os = shape_of(g, n.outputs[0]);
  const int64_t group = n.i("group", 1), N = xs[0], M = ws[0], Cg = ws[1], Mg = M / group;
  const Shape kernel(ws.begin() + 2, ws.end());
  const int64_t KK = numel(kernel), P = numel(Shape(os.begin() + 2, os.end()));
  std::string xp = pad_spatial(e, n, n.inputs[0], window_params(n, xs, kernel), 0.0);
  if (group > 1 && Cg == 1 && Mg == 1) {
    // Depthwise (one input and one output channel per group): im2col per group would be one
    // matmul per channel; instead each kernel tap is a per-channel scale of one strided
    // window, y = sum_k w[:, k] * window_k(x), all channels at once.
    Shape ws1 = {M};
    for (size_t i = 2; i < xs.size(); ++i) ws1.push_back(1);
    std::string w2 = reshape(e, n.name + ".weight", n.inputs[1], {M, KK});
    std::string y;
    int64_t k = 0;
    for (const auto& win : windows(e, n, xp, kernel, os)) {
      std::string wk = e.add(OpKind::Slice, n.name + ".tap", {w2, e.ints("s", {k}), e.ints("e", {k + 1}), e.ints("a", {1})});
      std::string t = e.add(OpKind::Mul, n.name + ".tap", {win, reshape(e, n.name + ".tap", wk, ws1)});
      y = y.empty() ? t : e.add(OpKind::Add, n.name + ".taps", {y, t});
      ++k;
    }
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) y = e.add(OpKind::Add, n.name + ".bias", {y, reshape(e, n.name + ".bias", n.inputs[2], ws1)});
    finish(e, n, y);
    return true;
  }
  std::vector<std::string> per_group;
  for (int64_t gi = 0; gi < group; ++gi) {
    std::string xg = xp, wg = n.inputs[1];
    if (group > 1) {
      xg = e.add(OpKind::Slice, n.name + ".group", {xp, e.ints("s", {gi * Cg}), e.ints("e", {(gi + 1) * Cg}), e.ints("a", {1})});
      wg = e.add(OpKind::Slice, n.name + ".wgroup", {wg, e.ints("s", {gi * Mg}), e.ints("e", {(gi + 1) * Mg}), e.ints("a", {0})});
    }
    // im2col: [N, Cg, KK, P] from KK strided windows, then [N, Cg*KK, P].
    std::vector<std::string> cols;
    for (const auto& w : windows(e, n, xg, kernel, os)) {
      Shape s = {N, Cg, 1, P};
      cols.push_back(reshape(e, n.name + ".col", w, s));
    }
    std::string col = cols.size() == 1 ? cols[0] : e.add(OpKind::Concat, n.name + ".im2col", cols, {{"axis", int64_t{2}}});
    col = reshape(e, n.name + ".im2col", col, {N, Cg * KK, P});
    std::string w2 = reshape(e, n.name + ".weight", wg, {Mg, Cg * KK});
    per_group.push_back(e.add(OpKind::MatMul, n.name, {w2, col}));   // [N, Mg, P]
  }
  std::string y = per_group.size() == 1 ? per_group[0] : e.add(OpKind::Concat, n.name + ".groups", per_group, {{"axis", int64_t{1}}});
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    std::string b = reshape(e, n.name + ".bias", n.inputs[2], {M, 1});
    y = e.add(OpKind::Add, n.name + ".bias", {y, b});
  }
  finish(e, n, y);
  return true;
}

}  // namespace

void register_conv(OpRegistry& r) {
  r.push_back({.kind = OpKind::Conv, .name = "Conv", .cls = OpClass::Compute, .min_inputs = 2, .max_inputs = 3,
               .attributes = {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"},
               .rules = {.infer = infer, .decompose = decompose}});
}

}  // namespace trnsim::compiler
