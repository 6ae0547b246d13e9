#include "trnsim/compiler/shape_inference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "trnsim/common/error.h"
#include "trnsim/compiler/host_eval.h"
#include "trnsim/compiler/op_params.h"
#include "trnsim/compiler/resize_params.h"

namespace trnsim::compiler {
namespace {

constexpr int64_t kFoldLimit = 1 << 16;  // elements: shape sub-graphs, not weights

ElemType cast_target(const Node& n) {
  switch (n.i("to", 1)) {
    case 1: return ElemType::Float;
    case 10: return ElemType::Float16;
    case 16: return ElemType::BFloat16;
    case 11: return ElemType::Double;
    case 7: return ElemType::Int64;
    case 6: return ElemType::Int32;
    case 3: return ElemType::Int8;
    case 5: return ElemType::Int16;
    case 4: return ElemType::UInt16;
    case 12: return ElemType::UInt32;
    case 13: return ElemType::UInt64;
    case 2: return ElemType::UInt8;
    case 9: return ElemType::Bool;
    case 17: return ElemType::Float8E4M3FN;
    case 19: return ElemType::Float8E5M2;
    case 23: return ElemType::Float4E2M1;
    default: break;
  }
  throw UnsupportedError(fmt::format("unsupported: op Cast (attribute to={}) at node '{}'", n.i("to", 1), n.name));
}

bool is_comparison(OpKind k) {
  return k == OpKind::Equal || k == OpKind::Less || k == OpKind::Greater || k == OpKind::LessOrEqual ||
         k == OpKind::GreaterOrEqual || k == OpKind::And || k == OpKind::Or || k == OpKind::Not || k == OpKind::IsNaN;
}

Shape conv_like_out(const Node& n, const Shape& x, const Shape& kernel, int64_t channels) {
  if (n.op == OpKind::Conv && n.i("ceil_mode", 0)) throw UnsupportedError(fmt::format("unsupported: op Conv (attribute ceil_mode = 1) at node '{}'", n.name));
  auto w = window_params(n, x, kernel);
  Shape out = {x[0], channels};
  out.insert(out.end(), w.out.begin(), w.out.end());
  return out;
}

}  // namespace

void dropout_check(const Graph& g, const Node& n) {
  // Inference only. Training mode with a non-zero ratio draws a random mask that no reference
  // can reproduce, so it is refused; training mode with ratio 0 is the identity too.
  if (n.inputs.size() < 3 || n.inputs[2].empty()) return;
  if (!g.is_const(n.inputs[2]))
    throw ConstantRequiredError(fmt::format("unsupported: op Dropout (input training_mode computed at run time; it must be constant) at node '{}'", n.name), {n.inputs[2]});
  const double training = const_scalar(g, n, 2, 0.0);
  if (training == 0) return;
  double ratio = 0.5;
  if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
    if (!g.is_const(n.inputs[1]))
      throw ConstantRequiredError(fmt::format("unsupported: op Dropout (input ratio computed at run time with training_mode = 1) at node '{}'", n.name), {n.inputs[1]});
    ratio = const_scalar(g, n, 1, 0.5);
  }
  if (ratio != 0)
    throw UnsupportedError(fmt::format("unsupported: op Dropout (attribute training_mode = 1 with ratio = {:g}: random masks) at node '{}'", ratio, n.name));
}

std::vector<std::string> bind_inputs(Graph& g, const std::map<std::string, Shape>& shapes,
                                     const std::map<std::string, int64_t>& dims, int64_t batch) {
  std::vector<std::string> defaulted;
  for (const auto& name : g.inputs) {
    auto& t = g.tensor(name);
    if (t.dim_params.size() != t.shape.size()) t.dim_params.assign(t.shape.size(), "");
    if (auto it = shapes.find(name); it != shapes.end()) {
      const Shape& s = it->second;
      if (s.size() != t.shape.size())
        throw ShapeError(fmt::format("input '{}': given rank {} ({}), the model declares rank {}", name, s.size(), shape_str(s), t.shape.size()));
      for (size_t i = 0; i < s.size(); ++i)
        if (t.dim_params[i].empty() && t.shape[i] != s[i])
          throw ShapeError(fmt::format("input '{}': axis {} is {} in the model, {} given", name, i, t.shape[i], s[i]));
      t.shape = s;
    } else {
      for (size_t i = 0; i < t.shape.size(); ++i) {
        if (t.dim_params[i].empty()) continue;
        auto d = dims.find(fmt::format("{}[{}]", name, i));  // by position: unnamed axes ('?') too
        if (d == dims.end()) d = dims.find(t.dim_params[i]);
        t.shape[i] = d != dims.end() ? d->second : (i == 0 ? batch : 1);
        if (d == dims.end() && i != 0) defaulted.push_back(fmt::format("{}[{}] '{}'", name, i, t.dim_params[i]));
      }
    }
    t.shape_known = true;
  }
  return defaulted;
}

void infer_node(Graph& g, const Node& n) {
  auto in = [&](size_t i) -> const TensorInfo& { return g.tensor(n.inputs.at(i)); };
  auto set = [&](size_t o, Shape s, ElemType t) {
    auto& out = g.tensor(n.outputs.at(o));
    out.shape = std::move(s);
    out.type = t;
    out.shape_known = true;
  };
  for (const auto& i : n.inputs)
    if (!i.empty() && !g.tensor(i).shape_known)
      throw ShapeError(fmt::format("node '{}': input '{}' has no shape", n.name, i));
  const Shape& x = in(0).shape;
  const ElemType xt = in(0).type;
  const int64_t rank = static_cast<int64_t>(x.size());
  const auto cls = op_info(n.op).cls;
  if (n.op == OpKind::Dropout) {
    dropout_check(g, n);
    set(0, x, xt);
    if (n.outputs.size() > 1 && !n.outputs[1].empty()) set(1, x, ElemType::Bool);
    return;
  }
  if (cls == OpClass::Binary) {
    Shape s = x;
    for (size_t i = 1; i < n.inputs.size(); ++i) s = broadcast_shapes(s, in(i).shape, n.name);
    ElemType t = n.op == OpKind::Where ? in(1).type : xt;
    set(0, s, is_comparison(n.op) ? ElemType::Bool : t);
    return;
  }
  if (cls == OpClass::Unary) {
    set(0, x, n.op == OpKind::Cast ? cast_target(n) : n.op == OpKind::CastLike ? in(1).type : (n.op == OpKind::Not || n.op == OpKind::IsNaN) ? ElemType::Bool : xt);
    return;
  }
  switch (n.op) {
    case OpKind::MatMul: {
      Shape a = x, b = in(1).shape;
      if (a.empty() || b.empty()) throw ShapeError(fmt::format("node '{}': MatMul of a scalar", n.name));
      bool a1 = a.size() == 1, b1 = b.size() == 1;
      if (a1) a.insert(a.begin(), 1);
      if (b1) b.push_back(1);
      if (a.back() != b[b.size() - 2])
        throw ShapeError(fmt::format("node '{}': MatMul {} x {}: inner sizes differ", n.name, shape_str(in(0).shape), shape_str(in(1).shape)));
      Shape batch = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2), n.name);
      Shape s = batch;
      if (!a1) s.push_back(a[a.size() - 2]);
      if (!b1) s.push_back(b.back());
      set(0, s, xt);
      return;
    }
    case OpKind::Gemm: {
      Shape a = x, b = in(1).shape;
      if (a.size() != 2 || b.size() != 2) throw ShapeError(fmt::format("node '{}': Gemm needs 2-D operands", n.name));
      if (n.i("transA", 0)) std::swap(a[0], a[1]);
      if (n.i("transB", 0)) std::swap(b[0], b[1]);
      if (a[1] != b[0]) throw ShapeError(fmt::format("node '{}': Gemm inner sizes {} and {} differ", n.name, a[1], b[0]));
      set(0, {a[0], b[1]}, xt);
      return;
    }
    case OpKind::Conv: {
      const Shape& w = in(1).shape;
      if (rank < 3 || w.size() != x.size()) throw ShapeError(fmt::format("node '{}': Conv input {} weight {}", n.name, shape_str(x), shape_str(w)));
      Shape k(w.begin() + 2, w.end());
      auto ks = n.ints("kernel_shape", k);
      if (ks != k) throw ShapeError(fmt::format("node '{}': kernel_shape disagrees with the weight", n.name));
      if (x[1] != w[1] * n.i("group", 1)) throw ShapeError(fmt::format("node '{}': {} input channels, weight expects {} x group", n.name, x[1], w[1]));
      set(0, conv_like_out(n, x, k, w[0]), xt);
      return;
    }
    case OpKind::MaxPool:
    case OpKind::AveragePool: {
      set(0, conv_like_out(n, x, n.ints("kernel_shape"), x.at(1)), xt);
      if (n.outputs.size() > 1 && !n.outputs[1].empty()) {
        if (n.op != OpKind::MaxPool) throw ShapeError(fmt::format("node '{}': AveragePool has one output", n.name));
        set(1, g.tensor(n.outputs[0]).shape, ElemType::Int64);
      }
      return;
    }
    case OpKind::GlobalAveragePool: {
      Shape s = x;
      for (size_t i = 2; i < s.size(); ++i) s[i] = 1;
      set(0, s, xt);
      return;
    }
    case OpKind::BatchNormalization:
      if (n.i("training_mode", 0)) throw UnsupportedError(fmt::format("unsupported: op BatchNormalization (attribute training_mode=1) at node '{}'", n.name));
      if (n.outputs.size() > 1) throw UnsupportedError(fmt::format("unsupported: op BatchNormalization (running-statistics outputs) at node '{}'", n.name));
      set(0, x, xt);
      return;
    case OpKind::LayerNormalization: {
      // Mean and InvStdDev: the input's shape with the normalised axes kept as 1, in the stash
      // type (float: the only one ONNX defines).
      if (n.i("stash_type", 1) != 1)
        throw UnsupportedError(fmt::format("unsupported: op LayerNormalization (attribute stash_type = {}) at node '{}'", n.i("stash_type", 1), n.name));
      const int64_t axis = normalize_axis(n.i("axis", -1), rank, n.name);
      Shape stat = x;
      for (int64_t i = axis; i < rank; ++i) stat[i] = 1;
      set(0, x, xt);
      for (size_t o = 1; o < n.outputs.size() && o < 3; ++o)
        if (!n.outputs[o].empty()) set(o, stat, ElemType::Float);
      return;
    }
    case OpKind::LRN: {
      if (rank < 2) throw ShapeError(fmt::format("node '{}': LRN needs an input of rank >= 2 (N, C, ...), got {}", n.name, shape_str(x)));
      const int64_t size = n.i("size", 0);
      if (size < 1) throw ShapeError(fmt::format("node '{}': LRN attribute size = {} (must be >= 1)", n.name, size));
      set(0, x, xt);
      return;
    }
    case OpKind::FusedAttention:  // only the attention-fusion pass makes it, after shape inference
      throw UnsupportedError(fmt::format("unsupported: op FusedAttention (internal to the compiler) at node '{}'", n.name));
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
      set(0, x, xt);
      return;
    case OpKind::ReduceMean:
    case OpKind::ReduceSum:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin: {
      auto axes = reduce_axes(g, n, rank);
      Shape s;
      for (int64_t i = 0; i < rank; ++i) {
        bool red = std::find(axes.begin(), axes.end(), i) != axes.end();
        if (!red) s.push_back(x[i]);
        else if (keepdims(n)) s.push_back(1);
      }
      set(0, s, xt);
      return;
    }
    case OpKind::Reshape: set(0, reshape_target(g, n, x), xt); return;
    case OpKind::Flatten: {
      int64_t a = n.i("axis", 1);
      if (a < 0) a += rank;
      if (a < 0 || a > rank) throw ShapeError(fmt::format("node '{}': Flatten axis out of range", n.name));
      int64_t l = 1;
      for (int64_t i = 0; i < a; ++i) l *= x[i];
      set(0, {l, numel(x) / std::max<int64_t>(l, 1)}, xt);
      return;
    }
    case OpKind::Transpose: {
      auto p = transpose_perm(n, rank);
      Shape s;
      for (auto a : p) s.push_back(x[a]);
      set(0, s, xt);
      return;
    }
    case OpKind::Concat: {
      int64_t a = normalize_axis(n.i("axis", 0), rank, n.name);
      Shape s = x;
      s[a] = 0;
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        const Shape& si = in(i).shape;
        if (si.size() != x.size()) throw ShapeError(fmt::format("node '{}': Concat of ranks {} and {}", n.name, x.size(), si.size()));
        for (int64_t d = 0; d < rank; ++d)
          if (d != a && si[d] != x[d]) throw ShapeError(fmt::format("node '{}': Concat inputs {} and {} differ off the axis", n.name, shape_str(x), shape_str(si)));
        s[a] += si[a];
      }
      set(0, s, xt);
      return;
    }
    case OpKind::Slice: {
      auto r = slice_ranges(g, n, x);
      Shape s;
      for (const auto& sr : r) s.push_back(sr.count);
      set(0, s, xt);
      return;
    }
    case OpKind::Gather: {
      int64_t a = normalize_axis(n.i("axis", 0), rank, n.name);
      Shape s(x.begin(), x.begin() + a);
      for (auto d : in(1).shape) s.push_back(d);
      s.insert(s.end(), x.begin() + a + 1, x.end());
      set(0, s, xt);
      return;
    }
    case OpKind::Resize: set(0, resize_params(g, n, x).out, xt); return;
    case OpKind::Tile: {
      auto reps = const_ints(g, n, 1);
      if (static_cast<int64_t>(reps.size()) != rank)
        throw ShapeError(fmt::format("node '{}': Tile has {} repeats for rank {}", n.name, reps.size(), rank));
      Shape s = x;
      for (int64_t i = 0; i < rank; ++i) {
        if (reps[i] < 0) throw ShapeError(fmt::format("node '{}': Tile repeats must be >= 0", n.name));
        s[i] *= reps[i];
      }
      set(0, s, xt);
      return;
    }
    case OpKind::GatherElements:
      if (in(1).shape.size() != x.size()) throw ShapeError(fmt::format("node '{}': GatherElements indices rank differs from data", n.name));
      set(0, in(1).shape, xt);
      return;
    case OpKind::Expand: set(0, broadcast_shapes(x, const_ints(g, n, 1), n.name), xt); return;
    case OpKind::Unsqueeze: {
      int64_t nax = n.has("axes") ? static_cast<int64_t>(n.ints("axes").size()) : numel(in(1).shape);
      auto axes = unsqueeze_axes(g, n, rank + nax);
      Shape s = x;
      for (auto a : axes) s.insert(s.begin() + a, 1);
      set(0, s, xt);
      return;
    }
    case OpKind::Squeeze: {
      auto axes = squeeze_axes(g, n, x);
      Shape s;
      for (int64_t i = 0; i < rank; ++i)
        if (std::find(axes.begin(), axes.end(), i) == axes.end()) s.push_back(x[i]);
      set(0, s, xt);
      return;
    }
    case OpKind::Shape: {
      int64_t b = n.i("start", 0), e = n.i("end", rank);
      if (b < 0) b += rank;
      if (e < 0) e += rank;
      b = std::clamp<int64_t>(b, 0, rank);
      e = std::clamp<int64_t>(e, b, rank);
      set(0, {e - b}, ElemType::Int64);
      return;
    }
    case OpKind::Size: set(0, {}, ElemType::Int64); return;
    case OpKind::ConstantOfShape: {
      ElemType t = ElemType::Float;
      if (auto it = n.attrs.find("value"); it != n.attrs.end()) t = std::get<TensorInfo>(it->second).type;
      set(0, const_ints(g, n, 0), t);
      return;
    }
    case OpKind::Range: {
      double s = const_scalar(g, n, 0, 0), l = const_scalar(g, n, 1, 0), d = const_scalar(g, n, 2, 1);
      int64_t cnt = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((l - s) / d)));
      set(0, {cnt}, xt);
      return;
    }
    case OpKind::Pad: {
      auto p = pad_params(g, n, x);
      Shape s = x;
      for (int64_t i = 0; i < rank; ++i) s[i] += p.begin[i] + p.end[i];
      set(0, s, xt);
      return;
    }
    case OpKind::Split: {
      int64_t a = normalize_axis(n.i("axis", 0), rank, n.name);
      auto sizes = split_sizes(g, n, x, a);
      for (size_t o = 0; o < n.outputs.size(); ++o) {
        Shape s = x;
        s[a] = sizes[o];
        set(o, s, xt);
      }
      return;
    }
    default: break;
  }
  throw UnsupportedError(fmt::format("unsupported: op {} (no shape inference) at node '{}'", op_name(n.op), n.name));
}

void infer_shapes(Graph& g) {
  std::vector<Node> kept;
  for (auto& n : g.nodes) {
    infer_node(g, n);
    bool all_const = true;
    for (const auto& i : n.inputs) all_const &= i.empty() || g.is_const(i);
    int64_t out_elems = 0;
    for (const auto& o : n.outputs) out_elems += o.empty() ? 0 : numel(g.tensor(o).shape);
    if ((all_const || n.op == OpKind::Shape || n.op == OpKind::Size) && out_elems <= kFoldLimit && host_eval_supported(n.op)) {
      host_eval(g, n);
      continue;
    }
    kept.push_back(std::move(n));
  }
  g.nodes = std::move(kept);
}

}  // namespace trnsim::compiler
