// RNN, GRU and LSTM (forward, reverse, bidirectional; layout 0 and 1; initial states, bias,
// LSTM peepholes, clip, GRU's linear_before_reset; activations Sigmoid/Tanh/Relu), unrolled
// over time at compile time into MatMul and element-wise kernels: the sequence length is
// static once the input shapes are bound. Per direction and gate, one MatMul of the whole
// sequence by W's rows of the gate (X W_k^T + the gate's biases); per step, a MatMul of the
// hidden state by R_k^T and the element-wise update. sequence_lens must be constant (value
// specialisation binds it): steps past a batch entry's length keep its state and write zeros
// to Y, as ONNX specifies.
#include <algorithm>
#include <cctype>

#include "trnsim/common/checked.h"
#include "trnsim/compiler/filled.h"
#include "trnsim/compiler/op_unit.h"
#include "trnsim/compiler/unroll_limit.h"

namespace trnsim::compiler {
namespace {

using namespace decomp;

struct Cell {
  int gates;                             // W's row blocks: RNN 1, GRU 3 (z r h), LSTM 4 (i o f c)
  std::vector<std::string> defaults;     // activations per direction: f (g (h))
};

Cell cell(const Node& n) {
  if (n.op == OpKind::LSTM) return {4, {"sigmoid", "tanh", "tanh"}};
  if (n.op == OpKind::GRU) return {3, {"sigmoid", "tanh"}};
  return {1, {"tanh"}};
}

struct Dims {
  int64_t seq, batch, input, hidden, dirs;
  bool batch_first;
};

Dims dims(const Graph& g, const Node& n) {
  const Shape& x = input(g, n, 0).shape;
  const Shape& w = input(g, n, 1).shape;
  const Shape& r = input(g, n, 2).shape;
  const std::string dir = n.s("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional") unsupported(n, fmt::format("attribute direction = {}", dir));
  const int64_t layout = n.i("layout", 0);
  if (layout != 0 && layout != 1) unsupported(n, fmt::format("attribute layout = {}", layout));
  const int64_t gates = cell(n).gates, dirs = dir == "bidirectional" ? 2 : 1;
  if (x.size() != 3 || w.size() != 3 || r.size() != 3)
    throw ShapeError(fmt::format("node '{}': {} wants X, W, R of rank 3, got {} {} {}", n.name, op_name(n.op), shape_str(x), shape_str(w), shape_str(r)));
  Dims d{layout ? x[1] : x[0], layout ? x[0] : x[1], x[2], n.i("hidden_size", r[2]), dirs, layout == 1};
  // hidden_size is R's last dim; checked before the gate arithmetic (INT64_MIN overflowed
  // `gates * hidden`; fuzz, onnx_structured).
  if (d.hidden <= 0 || d.hidden != r[2])
    throw ShapeError(fmt::format("node '{}': {} hidden_size {} (want R's last dim, {}, positive)", n.name, op_name(n.op), d.hidden, r[2]));
  const std::string rows = fmt::format("node '{}': {} gate rows", n.name, op_name(n.op));
  const int64_t gate_rows = checked_mul(gates, d.hidden, rows), bias_rows = checked_mul(2, gate_rows, rows);
  const Shape want_w = {dirs, gate_rows, d.input}, want_r = {dirs, gate_rows, d.hidden};
  if (w != want_w || r != want_r)
    throw ShapeError(fmt::format("node '{}': {} W {} and R {} (want {} and {})", n.name, op_name(n.op), shape_str(w), shape_str(r), shape_str(want_w), shape_str(want_r)));
  if (has_input(n, 3) && input(g, n, 3).shape != Shape{dirs, bias_rows})
    throw ShapeError(fmt::format("node '{}': B {} (want [{}, {}])", n.name, shape_str(input(g, n, 3).shape), dirs, bias_rows));
  if (has_input(n, 4) && input(g, n, 4).shape != Shape{d.batch})
    throw ShapeError(fmt::format("node '{}': sequence_lens {} (want [{}])", n.name, shape_str(input(g, n, 4).shape), d.batch));
  // Unrolled at compile time, a few nodes per step: the step count is bounded before the
  // unrolling spends memory on it (2^31 - 1 steps reached bad_alloc; fuzz, onnx_structured).
  // The steps' outputs are joined by one Concat per direction, whose inputs the op table bounds
  // at kMaxUnrolledTaps: past it the refusal named that internal Concat, not the RNN.
  constexpr int64_t kMaxSteps = kMaxUnrolledTaps;
  if (d.seq > kMaxSteps)
    throw ShapeError(fmt::format("node '{}': {} over {} steps: unrolled at compile time, at most {} steps", n.name,
                                 op_name(n.op), d.seq, kMaxSteps));
  const Shape state = d.batch_first ? Shape{d.batch, dirs, d.hidden} : Shape{dirs, d.batch, d.hidden};
  for (size_t i : {size_t{5}, size_t{6}})
    if (has_input(n, i) && input(g, n, i).shape != state)
      throw ShapeError(fmt::format("node '{}': initial state {} (want {})", n.name, shape_str(input(g, n, i).shape), shape_str(state)));
  if (has_input(n, 7) && input(g, n, 7).shape != Shape{dirs, checked_mul(3, d.hidden, rows)})
    throw ShapeError(fmt::format("node '{}': P {} (want [{}, {}])", n.name, shape_str(input(g, n, 7).shape), dirs, 3 * d.hidden));
  return d;
}

// The activation names, per direction f (g (h)): the attribute (the importer joins a list of
// strings with ','; names compared without case, as onnxruntime does) or the defaults.
std::vector<std::string> activations(const Node& n, int64_t dirs) {
  const auto def = cell(n).defaults;
  std::vector<std::string> a;
  if (!n.has("activations")) {
    for (int64_t d = 0; d < dirs; ++d) a.insert(a.end(), def.begin(), def.end());
    return a;
  }
  const std::string list = n.s("activations", "");
  for (size_t at = 0; at <= list.size();) {
    const size_t comma = std::min(list.find(',', at), list.size());
    std::string f = list.substr(at, comma - at);
    std::transform(f.begin(), f.end(), f.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    if (f != "sigmoid" && f != "tanh" && f != "relu") unsupported(n, fmt::format("activation {} (implemented: Sigmoid, Tanh, Relu)", list.substr(at, comma - at)));
    a.push_back(f);
    at = comma + 1;
  }
  if (a.size() == def.size() && dirs == 2) a.insert(a.end(), a.begin(), a.end());
  if (a.size() != def.size() * static_cast<size_t>(dirs))
    throw ShapeError(fmt::format("node '{}': {} activations '{}' (want {} per direction)", n.name, op_name(n.op), list, def.size()));
  return a;
}

void infer(Graph& g, const Node& n) {
  const Dims d = dims(g, n);
  activations(n, d.dirs);
  if (n.op == OpKind::LSTM && n.i("input_forget", 0) != 0) unsupported(n, "attribute input_forget = 1");
  if (has_input(n, 4)) {
    for (double l : const_values(g, n, 4))  // constant, or a ConstantRequiredError naming it
      if (l < 0 || l > static_cast<double>(d.seq))
        throw ShapeError(fmt::format("node '{}': sequence length {} outside [0, {}]", n.name, l, d.seq));
  }
  const ElemType t = input(g, n, 0).type;
  const Shape y = d.batch_first ? Shape{d.batch, d.seq, d.dirs, d.hidden} : Shape{d.seq, d.dirs, d.batch, d.hidden};
  const Shape state = d.batch_first ? Shape{d.batch, d.dirs, d.hidden} : Shape{d.dirs, d.batch, d.hidden};
  if (has_output(n, 0)) set_output(g, n, 0, y, t);
  for (size_t o = 1; o < n.outputs.size(); ++o)
    if (has_output(n, o)) set_output(g, n, o, state, t);
}

// Builds one node's unrolled graph.
struct Unroll {
  GraphEditor& e;
  const Node& n;
  Dims d;
  ElemType t;
  std::vector<double> lens;  // sequence_lens (empty: all full)

  std::string slice(const std::string& name, const std::string& x, std::vector<int64_t> s, std::vector<int64_t> en, std::vector<int64_t> axes) {
    return e.add(OpKind::Slice, n.name + "." + name, {x, e.ints("starts", s), e.ints("ends", en), e.ints("axes", axes)});
  }
  std::string op(OpKind k, const std::string& name, std::vector<std::string> ins) { return e.add(k, n.name + "." + name, std::move(ins)); }
  std::string clip(const std::string& x) {
    if (!n.has("clip")) return x;
    const double c = n.f("clip", 0);
    return op(OpKind::Max, "clip", {op(OpKind::Min, "clip", {x, e.constant("hi", {}, {c}, t)}), e.constant("lo", {}, {-c}, t)});
  }
  // clip bounds the gates' pre-activations, not the cell state before h (as onnxruntime does).
  std::string act(const std::string& f, const std::string& x, bool clipped = true) {
    const OpKind k = f == "sigmoid" ? OpKind::Sigmoid : f == "tanh" ? OpKind::Tanh : OpKind::Relu;
    return op(k, "act", {clipped ? clip(x) : x});
  }
  // Rows [k H, (k+1) H) of a per-direction weight W or R, transposed: [in, H].
  std::string gate_weight(const std::string& w, int64_t dir, int64_t k, int64_t cols) {
    const int64_t h = d.hidden;
    std::string s = slice("w", w, {dir, k * h}, {dir + 1, (k + 1) * h}, {0, 1});
    return transpose(e, n.name + ".w", reshape(e, n.name + ".w", s, {h, cols}), {1, 0});
  }
  // Bias block b (0..2 gates - 1) of direction dir: [1, H].
  std::string bias(int64_t dir, int64_t b) {
    return slice("b", n.inputs[3], {dir, b * d.hidden}, {dir + 1, (b + 1) * d.hidden}, {0, 1});
  }
  std::string initial(size_t i, int64_t dir) {
    const Shape bh = {d.batch, d.hidden};
    if (!has_input(n, i)) return e.constant(n.name + ".h0", bh, filled(numel(bh), 0.0, fmt::format("node '{}': initial state {}", n.name, shape_str(bh))), t);
    const int64_t ax = d.batch_first ? 1 : 0;
    return reshape(e, n.name + ".h0", slice("h0", n.inputs[i], {dir}, {dir + 1}, {ax}), bh);
  }
  // Whether step s of batch entry b is inside its sequence: [B, 1] mask, or "" when all are.
  std::string mask(int64_t s) {
    if (lens.empty()) return "";
    std::vector<double> m;
    bool all = true;
    for (double l : lens) {
      m.push_back(static_cast<double>(s) < l ? 1.0 : 0.0);
      all &= m.back() != 0;
    }
    return all ? "" : e.constant(n.name + ".mask", {d.batch, 1}, m, ElemType::Bool);
  }
  std::string keep(const std::string& m, const std::string& next, const std::string& prev) {
    return m.empty() ? next : e.add(OpKind::Where, n.name + ".mask", {m, next, prev});
  }
};

struct DirOut {
  std::vector<std::string> ys;  // per time step (in time order): [1, 1, B, H]
  std::string h, c;
};

DirOut run_direction(Unroll& u, const std::string& x, int64_t dir, bool reverse, const std::vector<std::string>& act) {
  const Node& n = u.n;
  const int64_t gates = cell(n).gates, S = u.d.seq, H = u.d.hidden, B = u.d.batch;
  const bool gru = n.op == OpKind::GRU, lstm = n.op == OpKind::LSTM, lbr = gru && n.i("linear_before_reset", 0) != 0;
  std::vector<std::string> xw(gates), rt(gates), rb(gates);
  for (int64_t k = 0; k < gates; ++k) {
    xw[k] = u.e.add(OpKind::MatMul, n.name + ".xw", {x, u.gate_weight(n.inputs[1], dir, k, u.d.input)});  // [S, B, H]
    rt[k] = u.gate_weight(n.inputs[2], dir, k, H);
    if (!has_input(n, 3)) continue;
    const bool separate = gru && lbr && k == 2;  // Rb_h sits inside r * (...)
    xw[k] = u.op(OpKind::Add, "xw.bias", {xw[k], separate ? u.bias(dir, k) : u.op(OpKind::Add, "bias", {u.bias(dir, k), u.bias(dir, gates + k)})});
    if (separate) rb[k] = u.bias(dir, gates + k);
  }
  std::vector<std::string> peep(3);
  if (lstm && has_input(n, 7))
    for (int64_t k = 0; k < 3; ++k) peep[k] = u.slice("p", n.inputs[7], {dir, k * H}, {dir + 1, (k + 1) * H}, {0, 1});
  DirOut o;
  o.h = u.initial(5, dir);
  if (lstm) o.c = u.initial(6, dir);
  const std::string zero = u.e.constant(n.name + ".zero", {}, {0.0}, u.t);
  std::vector<std::string> ys(static_cast<size_t>(S));
  for (int64_t i = 0; i < S; ++i) {
    const int64_t s = reverse ? S - 1 - i : i;
    auto xt = [&](int64_t k) { return reshape(u.e, n.name + ".x", u.slice("x", xw[k], {s}, {s + 1}, {0}), {B, H}); };
    auto pre = [&](int64_t k, const std::string& h) { return u.op(OpKind::Add, "pre", {xt(k), u.e.add(OpKind::MatMul, n.name + ".hr", {h, rt[k]})}); };
    std::string h, c;
    if (n.op == OpKind::RNN) {
      h = u.act(act[0], pre(0, o.h));
    } else if (gru) {
      const std::string z = u.act(act[0], pre(0, o.h)), r = u.act(act[0], pre(1, o.h));
      std::string cand;
      if (lbr) {
        std::string hr = u.e.add(OpKind::MatMul, n.name + ".hr", {o.h, rt[2]});
        if (!rb[2].empty()) hr = u.op(OpKind::Add, "hr.bias", {hr, rb[2]});
        cand = u.act(act[1], u.op(OpKind::Add, "pre", {xt(2), u.op(OpKind::Mul, "reset", {r, hr})}));
      } else {
        cand = u.act(act[1], pre(2, u.op(OpKind::Mul, "reset", {r, o.h})));
      }
      // (1 - z) * cand + z * h = cand + z * (h - cand)
      h = u.op(OpKind::Add, "update", {cand, u.op(OpKind::Mul, "update", {z, u.op(OpKind::Sub, "update", {o.h, cand})})});
    } else {
      auto peephole = [&](int64_t k, const std::string& pre_k, const std::string& state) {
        return peep[k].empty() ? pre_k : u.op(OpKind::Add, "peep", {pre_k, u.op(OpKind::Mul, "peep", {peep[k], state})});
      };
      const std::string ig = u.act(act[0], peephole(0, pre(0, o.h), o.c)), fg = u.act(act[0], peephole(2, pre(2, o.h), o.c));
      const std::string cg = u.act(act[1], pre(3, o.h));
      c = u.op(OpKind::Add, "cell", {u.op(OpKind::Mul, "cell", {fg, o.c}), u.op(OpKind::Mul, "cell", {ig, cg})});
      const std::string og = u.act(act[0], peephole(1, pre(1, o.h), c));
      h = u.op(OpKind::Mul, "hidden", {og, u.act(act[2], c, false)});
    }
    const std::string m = u.mask(s);
    ys[static_cast<size_t>(s)] = reshape(u.e, n.name + ".y", m.empty() ? h : u.e.add(OpKind::Where, n.name + ".mask", {m, h, zero}), {1, 1, B, H});
    o.h = u.keep(m, h, o.h);
    if (lstm) o.c = u.keep(m, c, o.c);
  }
  o.ys = std::move(ys);
  return o;
}

// The tensor `from` written as output o of n (its shape already inferred).
void emit(GraphEditor& e, const Node& n, size_t o, const std::string& from) {
  const Shape s = shape_of(e.graph(), n.outputs[o]);
  e.add(OpKind::Reshape, n.name, {from, e.ints("shape", s)}, {}, n.outputs[o]);
}

std::string concat(GraphEditor& e, const Node& n, const std::vector<std::string>& xs, int64_t axis) {
  return xs.size() == 1 ? xs[0] : e.add(OpKind::Concat, n.name + ".concat", xs, {{"axis", axis}});
}

bool decompose(GraphEditor& e, const Node& n) {
  Graph& g = e.graph();
  Unroll u{e, n, dims(g, n), g.tensor(n.inputs[0]).type, {}};
  if (has_input(n, 4)) u.lens = const_values(g, n, 4).values();
  const auto act = activations(n, u.d.dirs);
  const size_t per_dir = cell(n).defaults.size();
  std::string x = u.d.batch_first ? transpose(e, n.name + ".x", n.inputs[0], {1, 0, 2}) : n.inputs[0];
  const bool reverse = n.s("direction", "forward") == "reverse";
  std::vector<DirOut> outs;
  for (int64_t dir = 0; dir < u.d.dirs; ++dir) {
    const std::vector<std::string> a(act.begin() + static_cast<std::ptrdiff_t>(dir * per_dir), act.begin() + static_cast<std::ptrdiff_t>((dir + 1) * per_dir));
    outs.push_back(run_direction(u, x, dir, reverse || dir == 1, a));
  }
  if (has_output(n, 0)) {
    std::vector<std::string> per_dir_y;
    for (const auto& o : outs) per_dir_y.push_back(concat(e, n, o.ys, 0));  // [S, 1, B, H]
    std::string y = concat(e, n, per_dir_y, 1);                              // [S, D, B, H]
    if (u.d.batch_first) y = transpose(e, n.name + ".y", y, {2, 0, 1, 3});
    emit(e, n, 0, y);
  }
  for (size_t o = 1; o < 3; ++o) {
    if (!has_output(n, o)) continue;
    std::vector<std::string> st;
    for (const auto& d : outs) st.push_back(reshape(e, n.name + ".state", o == 1 ? d.h : d.c, {1, u.d.batch, u.d.hidden}));
    std::string s = concat(e, n, st, 0);  // [D, B, H]
    if (u.d.batch_first) s = transpose(e, n.name + ".state", s, {1, 0, 2});
    emit(e, n, o, s);
  }
  return true;
}

OpInfo row(OpKind k, std::string_view name, int max_inputs, std::vector<std::string_view> extra) {
  std::vector<std::string_view> attrs = {"activations", "clip", "direction", "hidden_size", "layout"};
  attrs.insert(attrs.end(), extra.begin(), extra.end());
  return {.kind = k, .name = name, .cls = OpClass::Compute, .min_inputs = 3, .max_inputs = max_inputs, .attributes = attrs,
          .rules = {.infer = infer, .decompose = decompose}};
}

}  // namespace

void register_recurrent(OpRegistry& r) {
  r.push_back(row(OpKind::RNN, "RNN", 6, {}));
  r.push_back(row(OpKind::GRU, "GRU", 6, {"linear_before_reset"}));
  r.push_back(row(OpKind::LSTM, "LSTM", 8, {"input_forget"}));
}

}  // namespace trnsim::compiler
