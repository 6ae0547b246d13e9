#include "trnsim/compiler/host_eval.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "trnsim/common/error.h"
#include "trnsim/compiler/op_params.h"
#include "trnsim/compiler/shape_util.h"
#include "trnsim/numerics/convert.h"

namespace trnsim::compiler {
namespace {

// Walks every index of `shape` and hands the flat offsets into inputs of the given strides.
template <typename F>
void for_each_index(const Shape& shape, const std::vector<std::vector<int64_t>>& strides, F f) {
  const int64_t n = numel(shape);
  const size_t r = shape.size();
  std::vector<int64_t> idx(r, 0), off(strides.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    f(i, off);
    for (int d = static_cast<int>(r) - 1; d >= 0; --d) {
      ++idx[d];
      for (size_t k = 0; k < strides.size(); ++k) off[k] += strides[k][d];
      if (idx[d] < shape[d]) break;
      for (size_t k = 0; k < strides.size(); ++k) off[k] -= strides[k][d] * shape[d];
      idx[d] = 0;
    }
  }
}

const std::vector<double>& data(const Graph& g, const std::string& n) { return *g.tensor(n).data; }

}  // namespace

double round_to(ElemType t, double v) {
  switch (t) {
    case ElemType::Float: return static_cast<float>(v);
    case ElemType::Float16: return numerics::decode(numerics::encode(static_cast<float>(v), numerics::DType::F16), numerics::DType::F16);
    case ElemType::BFloat16: return numerics::decode(numerics::encode(static_cast<float>(v), numerics::DType::BF16), numerics::DType::BF16);
    case ElemType::Double: return v;
    case ElemType::Bool: return v != 0 ? 1 : 0;
    case ElemType::Float8E4M3FN:
    case ElemType::Float8E5M2:
    case ElemType::Float4E2M1: {  // ONNX Cast's default saturate=1 (saturate=0: below)
      numerics::ConvertOptions o;
      o.overflow = numerics::Overflow::Saturate;
      const auto dt = narrow_dtype(t);
      return numerics::decode(numerics::encode(static_cast<float>(v), dt, o), dt);
    }
    default: return std::isfinite(v) ? std::trunc(v) : 0;
  }
}

double eval_unary(OpKind k, double x, const Node& n) {
  switch (k) {
    case OpKind::Neg: return -x;
    case OpKind::Abs: return std::fabs(x);
    case OpKind::Sqrt: return std::sqrt(x);
    case OpKind::Reciprocal: return 1.0 / x;
    case OpKind::Exp: return std::exp(x);
    case OpKind::Log: return std::log(x);
    case OpKind::Erf: return std::erf(x);
    case OpKind::Tanh: return std::tanh(x);
    case OpKind::Relu: return x > 0 ? x : 0;
    case OpKind::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case OpKind::Gelu:
      if (n.s("approximate", "none") == "tanh")
        return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
      return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case OpKind::Softplus: return std::log1p(std::exp(x));
    case OpKind::Sin: return std::sin(x);
    case OpKind::Cos: return std::cos(x);
    case OpKind::Sign: return x > 0 ? 1 : x < 0 ? -1 : 0;
    case OpKind::Not: return x == 0 ? 1 : 0;
    case OpKind::IsNaN: return std::isnan(x) ? 1 : 0;
    case OpKind::Floor: return std::floor(x);
    case OpKind::Ceil: return std::ceil(x);
    case OpKind::Round: return std::nearbyint(x);  // default rounding mode: halves to even
    case OpKind::Elu: return x > 0 ? x : n.f("alpha", 1.0) * std::expm1(x);
    case OpKind::Selu:
      return n.f("gamma", 1.05070102214813232421875) * (x > 0 ? x : n.f("alpha", 1.67326319217681884765625) * std::expm1(x));
    case OpKind::Celu: {
      const double a = n.f("alpha", 1.0);
      return std::max(0.0, x) + std::min(0.0, a * std::expm1(x / a));
    }
    case OpKind::ThresholdedRelu: return x > n.f("alpha", 1.0) ? x : 0;
    case OpKind::Softsign: return x / (1 + std::fabs(x));
    case OpKind::Shrink: {
      const double l = n.f("lambd", 0.5), b = n.f("bias", 0.0);
      return x < -l ? x + b : x > l ? x - b : 0;
    }
    case OpKind::Dropout:  // inference: the identity (shape inference refused training mode)
    case OpKind::Identity:
    case OpKind::CastLike:
    case OpKind::Cast: return x;
    case OpKind::LeakyRelu: return x >= 0 ? x : x * n.f("alpha", 0.01);
    case OpKind::HardSigmoid: return std::clamp(n.f("alpha", 0.2) * x + n.f("beta", 0.5), 0.0, 1.0);
    case OpKind::HardSwish: return x * std::clamp(x / 6 + 0.5, 0.0, 1.0);
    default: break;
  }
  throw UnsupportedError(fmt::format("unsupported: op {} (host evaluation) at node '{}'", op_name(k), n.name));
}

double eval_binary(OpKind k, double a, double b, bool integral) {
  switch (k) {
    case OpKind::Add:
    case OpKind::Sum:
    case OpKind::Mean: return a + b;  // Mean: divided by the input count afterwards
    case OpKind::PRelu: return a < 0 ? a * b : a;
    case OpKind::Sub: return a - b;
    case OpKind::Mul: return a * b;
    case OpKind::Div: return integral ? (b == 0 ? 0 : std::trunc(a / b)) : a / b;
    case OpKind::Pow: return std::pow(a, b);
    case OpKind::Max: return std::max(a, b);
    case OpKind::Min: return std::min(a, b);
    case OpKind::Mod: return std::fmod(a, b);
    case OpKind::Equal: return a == b;
    case OpKind::Less: return a < b;
    case OpKind::Greater: return a > b;
    case OpKind::LessOrEqual: return a <= b;
    case OpKind::GreaterOrEqual: return a >= b;
    case OpKind::And: return a != 0 && b != 0;
    case OpKind::Or: return a != 0 || b != 0;
    default: break;
  }
  throw UnsupportedError(fmt::format("unsupported: op {} (host evaluation)", op_name(k)));
}

bool host_eval_supported(OpKind k) {
  switch (op_info(k).cls) {
    case OpClass::Binary:
    case OpClass::Unary:
    case OpClass::Shape:
    case OpClass::Movement: return true;
    default: break;
  }
  return k == OpKind::ReduceSum || k == OpKind::ReduceMean || k == OpKind::ReduceMax || k == OpKind::ReduceMin;
}

void host_eval(Graph& g, const Node& n) {
  auto& out = g.tensor(n.outputs.at(0));
  const Shape& os = out.shape;
  std::vector<double> r(static_cast<size_t>(numel(os)));
  const auto cls = op_info(n.op).cls;
  auto ishape = [&](size_t i) -> const Shape& { return g.tensor(n.inputs.at(i)).shape; };

  if (n.op == OpKind::Clip) {
    const auto& x = data(g, n.inputs[0]);
    double lo = n.has("min") ? n.f("min", 0) : const_scalar(g, n, 1, -INFINITY);
    double hi = n.has("max") ? n.f("max", 0) : const_scalar(g, n, 2, INFINITY);
    for (size_t i = 0; i < r.size(); ++i) r[i] = std::min(std::max(x[i], lo), hi);
  } else if (cls == OpClass::Binary) {
    std::vector<std::vector<int64_t>> st;
    for (size_t i = 0; i < n.inputs.size(); ++i) st.push_back(broadcast_strides(ishape(i), os));
    const bool integral = is_integral(g.tensor(n.inputs[0]).type);
    for_each_index(os, st, [&](int64_t i, const std::vector<int64_t>& off) {
      if (n.op == OpKind::Where)
        r[i] = data(g, n.inputs[0])[off[0]] != 0 ? data(g, n.inputs[1])[off[1]] : data(g, n.inputs[2])[off[2]];
      else {
        double v = data(g, n.inputs[0])[off[0]];
        for (size_t k = 1; k < n.inputs.size(); ++k) v = eval_binary(n.op, v, data(g, n.inputs[k])[off[k]], integral);
        r[i] = n.op == OpKind::Mean ? v / static_cast<double>(n.inputs.size()) : v;
      }
    });
  } else if (cls == OpClass::Unary) {
    const auto& x = data(g, n.inputs[0]);
    for (size_t i = 0; i < r.size(); ++i) r[i] = eval_unary(n.op, x[i], n);
  } else {
    switch (n.op) {
      case OpKind::Reshape:
      case OpKind::Flatten:
      case OpKind::Unsqueeze:
      case OpKind::Squeeze: r = data(g, n.inputs[0]); break;
      case OpKind::Shape: {
        const Shape& s = ishape(0);
        int64_t b = n.i("start", 0);
        if (b < 0) b += static_cast<int64_t>(s.size());
        b = std::clamp<int64_t>(b, 0, static_cast<int64_t>(s.size()));
        for (size_t i = 0; i < r.size(); ++i) r[i] = static_cast<double>(s[b + i]);
        break;
      }
      case OpKind::Size: r[0] = static_cast<double>(numel(ishape(0))); break;
      case OpKind::ConstantOfShape: {
        double v = 0;
        if (auto it = n.attrs.find("value"); it != n.attrs.end()) v = std::get<TensorInfo>(it->second).data->at(0);
        std::fill(r.begin(), r.end(), v);
        break;
      }
      case OpKind::Range: {
        double s = const_scalar(g, n, 0, 0), d = const_scalar(g, n, 2, 1);
        for (size_t i = 0; i < r.size(); ++i) r[i] = s + d * static_cast<double>(i);
        break;
      }
      case OpKind::Transpose: {
        auto p = transpose_perm(n, static_cast<int64_t>(ishape(0).size()));
        auto rs = row_major_strides(ishape(0));
        std::vector<int64_t> st;
        for (auto a : p) st.push_back(rs[a]);
        const auto& x = data(g, n.inputs[0]);
        for_each_index(os, {st}, [&](int64_t i, const std::vector<int64_t>& off) { r[i] = x[off[0]]; });
        break;
      }
      case OpKind::Expand: {
        const auto& x = data(g, n.inputs[0]);
        for_each_index(os, {broadcast_strides(ishape(0), os)}, [&](int64_t i, const std::vector<int64_t>& off) { r[i] = x[off[0]]; });
        break;
      }
      case OpKind::Slice: {
        auto sr = slice_ranges(g, n, ishape(0));
        auto rs = row_major_strides(ishape(0));
        int64_t base = 0;
        std::vector<int64_t> st;
        for (size_t a = 0; a < sr.size(); ++a) {
          base += sr[a].start * rs[a];
          st.push_back(sr[a].step * rs[a]);
        }
        const auto& x = data(g, n.inputs[0]);
        for_each_index(os, {st}, [&](int64_t i, const std::vector<int64_t>& off) { r[i] = x[base + off[0]]; });
        break;
      }
      case OpKind::Concat:
      case OpKind::Split:
      case OpKind::Gather:
      case OpKind::Pad: {
        // Concat/Split/Gather/Pad: copy blocks along the axis.
        const Shape& xs = ishape(0);
        const int64_t rank = static_cast<int64_t>(xs.size());
        if (n.op == OpKind::Pad) {
          auto p = pad_params(g, n, xs);
          const auto& x = data(g, n.inputs[0]);
          if (p.mode != "constant") {  // every output element reads the input element pad_source maps it to
            auto xst = row_major_strides(xs);
            std::vector<int64_t> idx(rank, 0);
            for (size_t i = 0; i < r.size(); ++i) {
              int64_t rem = static_cast<int64_t>(i), off = 0;
              for (int64_t a = rank - 1; a >= 0; --a) {
                idx[a] = rem % os[a];
                rem /= os[a];
                off += pad_source(p.mode, idx[a] - p.begin[a], xs[a]) * xst[a];
              }
              r[i] = x[off];
            }
            break;
          }
          std::fill(r.begin(), r.end(), p.value);
          auto ost = row_major_strides(os);
          int64_t base = 0;
          for (int64_t a = 0; a < rank; ++a) base += p.begin[a] * ost[a];
          for_each_index(xs, {ost}, [&](int64_t i, const std::vector<int64_t>& off) { r[base + off[0]] = x[i]; });
        } else if (n.op == OpKind::Concat) {
          int64_t a = normalize_axis(n.i("axis", 0), rank, n.name);
          auto ost = row_major_strides(os);
          int64_t at = 0;
          for (size_t k = 0; k < n.inputs.size(); ++k) {
            const auto& x = data(g, n.inputs[k]);
            for_each_index(ishape(k), {ost}, [&](int64_t i, const std::vector<int64_t>& off) { r[at * ost[a] + off[0]] = x[i]; });
            at += ishape(k)[a];
          }
        } else if (n.op == OpKind::Gather) {
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
              std::copy_n(x.begin() + (o * xs[a] + k) * inner, inner, r.begin() + (o * ni + j) * inner);
            }
        } else {  // Split: each output is a slice along the axis
          int64_t a = normalize_axis(n.i("axis", 0), rank, n.name);
          auto sizes = split_sizes(g, n, xs, a);
          auto xst = row_major_strides(xs);
          const auto& x = data(g, n.inputs[0]);
          int64_t at = 0;
          for (size_t o = 0; o < n.outputs.size(); ++o) {
            auto& t = g.tensor(n.outputs[o]);
            std::vector<double> v(static_cast<size_t>(numel(t.shape)));
            for_each_index(t.shape, {xst}, [&](int64_t i, const std::vector<int64_t>& off) { v[i] = x[at * xst[a] + off[0]]; });
            at += sizes[o];
            t.data = std::move(v);
          }
          return;
        }
        break;
      }
      case OpKind::Tile: {  // out index i reads the input at i mod the input's size, per axis
        const Shape& xs = ishape(0);
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
        break;
      }
      case OpKind::GatherElements: {
        const Shape& xs = ishape(0);
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
        break;
      }
      case OpKind::ReduceSum:
      case OpKind::ReduceMean:
      case OpKind::ReduceMax:
      case OpKind::ReduceMin: {
        const Shape& xs = ishape(0);
        auto axes = reduce_axes(g, n, static_cast<int64_t>(xs.size()));
        // Output strides seen from the input index space: 0 along reduced axes.
        Shape kept = xs;
        for (auto a : axes) kept[a] = 1;
        auto ost = broadcast_strides(kept, xs);
        double init = n.op == OpKind::ReduceMax ? -INFINITY : n.op == OpKind::ReduceMin ? INFINITY : 0;
        std::fill(r.begin(), r.end(), init);
        const auto& x = data(g, n.inputs[0]);
        for_each_index(xs, {ost}, [&](int64_t i, const std::vector<int64_t>& off) {
          double& d = r[off[0]];
          d = n.op == OpKind::ReduceMax ? std::max(d, x[i]) : n.op == OpKind::ReduceMin ? std::min(d, x[i]) : d + x[i];
        });
        if (n.op == OpKind::ReduceMean && !r.empty()) {
          double cnt = static_cast<double>(numel(xs)) / static_cast<double>(r.size());
          for (auto& v : r) v /= cnt;
        }
        break;
      }
      default:
        throw UnsupportedError(fmt::format("unsupported: op {} (host evaluation) at node '{}'", op_name(n.op), n.name));
    }
  }
  if (n.op == OpKind::Dropout && n.outputs.size() > 1 && !n.outputs[1].empty()) {
    auto& mask = g.tensor(n.outputs[1]);  // inference: every element kept
    mask.data = std::vector<double>(static_cast<size_t>(numel(mask.shape)), 1.0);
  }
  if (is_narrow_float(out.type) && (n.op == OpKind::Cast || n.op == OpKind::CastLike) && n.i("saturate", 1) == 0) {
    const auto dt = narrow_dtype(out.type);  // saturate=0: the format's own overflow rule
    for (auto& v : r) v = numerics::decode(numerics::encode(static_cast<float>(v), dt), dt);
  } else {
    for (auto& v : r) v = round_to(out.type, v);
  }
  out.data = std::move(r);
}

}  // namespace trnsim::compiler
