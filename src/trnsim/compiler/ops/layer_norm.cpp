// LayerNormalization over axes [axis, rank): the fused kernel (lower_layernorm) on a
// [rows, cols] view; with its Mean / InvStdDev outputs, built from reductions and element-wise
// ops. Split across cores by 128-row tiles; tensor-parallel when the split axis is not
// normalised.
#include "trnsim/compiler/core_split.h"
#include "trnsim/compiler/filled.h"
#include "trnsim/compiler/lower_norm.h"
#include "trnsim/compiler/op_unit.h"
#include "trnsim/compiler/shape_inference.h"
#include "trnsim/compiler/tp_rules.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

// Mean and InvStdDev: the input's shape with the normalised axes kept as 1, in the stash type
// (float: the only one ONNX defines).
void infer(Graph& g, const Node& n) {
  if (n.i("stash_type", 1) != 1)
    throw UnsupportedError(fmt::format("unsupported: op LayerNormalization (attribute stash_type = {}) at node '{}'", n.i("stash_type", 1), n.name));
  const Shape& x = input(g, n, 0).shape;
  const auto rank = static_cast<int64_t>(x.size());
  const int64_t axis = normalize_axis(n.i("axis", -1), rank, n.name);
  Shape stat = x;
  for (int64_t i = axis; i < rank; ++i) stat[i] = 1;
  set_output(g, n, 0, x, input(g, n, 0).type);
  for (size_t o = 1; o < n.outputs.size() && o < 3; ++o)
    if (!n.outputs[o].empty()) set_output(g, n, o, stat, ElemType::Float);
}

// The general form: the input as [rows, cols] (cols = the normalised axes), scale and bias as
// [cols] vectors.
void layernorm(GraphEditor& e, const Node& n) {
  const Shape xs = shape_of(e.graph(), n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(xs.size());
  int64_t axis = normalize_axis(n.i("axis", -1), rank, n.name);
  int64_t rows = 1;
  for (int64_t i = 0; i < axis; ++i) rows *= xs[i];
  int64_t cols = numel(xs) / std::max<int64_t>(rows, 1);
  auto param = [&](size_t i, double fill) {
    if (i < n.inputs.size() && !n.inputs[i].empty()) {
      std::string p = n.inputs[i];
      Shape ps = shape_of(e.graph(), p);
      if (numel(ps) == cols) return reshape(e, n.name + ".param", p, {cols});
      return reshape(e, n.name + ".param", e.add(OpKind::Expand, n.name + ".param", {p, e.ints("shape", Shape(xs.begin() + axis, xs.end()))}), {cols});
    }
    return e.constant(n.name + ".param", {cols}, filled(cols, fill, fmt::format("node '{}': a row of {} values", n.name, cols)));
  };
  std::string x2 = reshape(e, n.name + ".2d", n.inputs[0], {rows, cols});
  std::string y = e.add(OpKind::LayerNormalization, n.name, {x2, param(1, 1.0), param(2, 0.0)},
                        {{"axis", int64_t{-1}}, {"epsilon", n.f("epsilon", 1e-5)}});
  finish(e, n, y);
}


// LayerNormalization with its Mean / InvStdDev outputs: built from reductions and element-wise
// ops (the fused kernel does not return its statistics). Statistics are over axes [axis, rank).
void with_stats(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  const Shape xs = shape_of(g, n.inputs[0]);
  const int64_t rank = static_cast<int64_t>(xs.size());
  const int64_t axis = normalize_axis(n.i("axis", -1), rank, n.name);
  std::vector<int64_t> axes;
  for (int64_t i = axis; i < rank; ++i) axes.push_back(i);
  const Shape stat = shape_of(g, n.outputs.size() > 1 && !n.outputs[1].empty() ? n.outputs[1] : n.outputs[2]);
  auto reduce_mean = [&](const std::string& x, const std::string& tag) {
    Node r;
    r.op = OpKind::ReduceMean;
    r.name = n.name + tag;
    r.inputs = {x};
    r.attrs = {{"axes", axes}, {"keepdims", int64_t{1}}};
    r.outputs = {g.fresh(r.name)};
    g.tensors[r.outputs[0]].name = r.outputs[0];
    infer_node(g, r);
    reduce(e, r);
    return r.outputs[0];
  };
  std::string mean = reduce_mean(n.inputs[0], ".mean");
  std::string d = e.add(OpKind::Sub, n.name + ".center", {n.inputs[0], mean});
  std::string var = reduce_mean(e.add(OpKind::Mul, n.name + ".square", {d, d}), ".var");
  std::string inv = e.add(OpKind::Add, n.name + ".eps", {var, e.constant("eps", {}, {n.f("epsilon", 1e-5)})});
  inv = e.add(OpKind::Reciprocal, n.name + ".rstd", {e.add(OpKind::Sqrt, n.name + ".std", {inv})});
  std::string y = e.add(OpKind::Mul, n.name + ".norm", {d, inv});
  y = e.add(OpKind::Mul, n.name + ".gamma", {y, n.inputs[1]});
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) y = e.add(OpKind::Add, n.name + ".beta", {y, n.inputs[2]});
  finish(e, n, y);
  if (n.outputs.size() > 1 && !n.outputs[1].empty())
    e.add(OpKind::Reshape, n.name + ".mean_out", {mean, e.ints(n.name + ".shape", stat)}, {}, n.outputs[1]);
  if (n.outputs.size() > 2 && !n.outputs[2].empty())
    e.add(OpKind::Reshape, n.name + ".rstd_out", {inv, e.ints(n.name + ".shape", stat)}, {}, n.outputs[2]);
}


bool decompose(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  if (has_output(n, 1) || has_output(n, 2)) {
    with_stats(e, n);
    return true;
  }
  // The library kernel reads a scale and a bias of the row's length; a broadcast one ([1]) goes
  // through the decomposition (the kernel read a [1] scale as [cols] and failed at run time).
  const Shape& xs = shape_of(g, n.inputs[0]);
  const bool plain = xs.size() == 2 && normalize_axis(n.i("axis", -1), 2, n.name) == 1 && n.inputs.size() == 3 &&
                     !n.inputs[2].empty() && shape_of(g, n.inputs[1]) == Shape{xs[1]} && shape_of(g, n.inputs[2]) == Shape{xs[1]};
  if (plain) return false;
  layernorm(e, n);
  return true;
}

int64_t tp_axis(TpCtx& c) {
  const int64_t s = c.sp(c.n.inputs[0]);
  const int64_t ax = normalize_axis(c.n.i("axis", -1), static_cast<int64_t>(c.out_shape().size()), c.n.name);
  if (s < ax) return s;  // scale and bias span only the normalised (whole) axes
  return c.refuse("normalises over the split axis");
}

}  // namespace

void register_layer_norm(OpRegistry& r) {
  r.push_back({.kind = OpKind::LayerNormalization, .name = "LayerNormalization", .cls = OpClass::Compute, .min_inputs = 2, .max_inputs = 3,
               .attributes = {"axis", "epsilon", "stash_type"},
               .rules = {.infer = infer, .decompose = decompose, .lower = lower_layernorm,
                         .parallel_units = [](const Graph& g, const Node& n) { return row_tiles(g.tensor(n.inputs[0]).shape); },
                         .tp_axis = tp_axis}});
}

}  // namespace trnsim::compiler
