#include "trnsim/compiler/fuse_norm_prologue.h"

#include <algorithm>
#include <set>

#include "trnsim/compiler/const_data.h"

namespace trnsim::compiler {

namespace {

// The tensor a Reshape chain starts from, and the Reshape nodes on the way.
std::string through_reshapes(const Graph& g, std::string t, const std::map<std::string, size_t>& producer, const Shape& want) {
  while (g.tensor(t).shape != want) {
    auto p = producer.find(t);
    if (p == producer.end() || g.nodes[p->second].op != OpKind::Reshape) return "";
    t = g.nodes[p->second].inputs[0];
  }
  return t;
}

bool fusable(const Graph& g, const Node& ln) {
  if (ln.op != OpKind::LayerNormalization || ln.inputs.size() < 2) return false;
  for (size_t o = 1; o < ln.outputs.size(); ++o)
    if (!ln.outputs[o].empty()) return false;  // Mean / InvStdDev are read elsewhere
  const Shape& xs = g.tensor(ln.inputs[0]).shape;
  const int64_t axis = ln.i("axis", -1);
  if (xs.empty() || (axis != -1 && axis != static_cast<int64_t>(xs.size()) - 1)) return false;
  if (xs.back() > kMaxPrologueRow || g.tensor(ln.inputs[0]).type != ElemType::Float) return false;
  for (size_t i = 1; i < ln.inputs.size(); ++i)
    if (!ln.inputs[i].empty() && (!g.is_const(ln.inputs[i]) || numel(g.tensor(ln.inputs[i]).shape) != xs.back())) return false;
  return true;
}

// Whether MatMul `n` reads `t` as its row-major A with rows of `d` (the normalised axis) and
// more than one row (the matmul's transposing path, lower_matmul.cpp).
bool reads_rows_as_a(const Graph& g, const Node& n, const std::string& t, int64_t d) {
  if (n.op != OpKind::MatMul || n.inputs[0] != t || n.inputs[1] == t || n.i("sparse_4_16", 0) != 0) return false;
  const Shape& s = g.tensor(t).shape;
  if (s.size() < 2 || s.back() != d || s[s.size() - 2] <= 1) return false;
  // The scale and shift fold into B (below): a constant [K, N] fp32 weight. Not quantised
  // codes (int8, fp8: `quantize` runs first): the scaled codes were rounded back to the code
  // type, past e4m3's 448 to NaN; nor fp16, whose range a scale > 1 can leave.
  return g.is_const(n.inputs[1]) && g.tensor(n.inputs[1]).shape.size() == 2 && g.tensor(n.inputs[1]).type == ElemType::Float;
}

bool loaded(const Graph& g, const std::string& t) { return t.empty() || g.tensor(t).data->loaded(); }

// A new fp32-rounded constant of `like`'s type and `shape` (shape-only without values).
std::string add_const(Graph& g, const std::string& base, ElemType type, const Shape& shape, std::vector<double> v) {
  TensorInfo t{g.fresh(base), type, shape, true, {}, ConstData::shape_only(type, numel(shape))};
  if (!v.empty()) {
    if (type == ElemType::Float)
      for (double& x : v) x = static_cast<double>(static_cast<float>(x));
    t.data = ConstData::packed(type, std::move(v));
  }
  const std::string name = t.name;
  g.tensors[name] = std::move(t);
  return name;
}

// The LayerNorm's scale s and shift t folded into reader m, which then reads the normalised
// rows only ((x - mean) rstd): LN(x) W = ((x - mean) rstd) (diag(s) W) + t W, as BatchNormalization
// folds into a conv (fold_batchnorm.h). t W joins the first bias of m's epilogue, or becomes one.
void fold_affine(Graph& g, Node& m, const std::string& s, const std::string& t, const std::string& ln) {
  const TensorInfo& w = g.tensor(m.inputs[1]);
  const int64_t k = w.shape[0], n = w.shape[1];
  const bool values = loaded(g, m.inputs[1]) && loaded(g, s) && loaded(g, t);
  std::vector<double> wv = values ? w.data->values() : std::vector<double>{};
  const std::vector<double> sv = values ? g.tensor(s).data->values() : std::vector<double>{};
  const std::vector<double> tv = values && !t.empty() ? g.tensor(t).data->values() : std::vector<double>{};
  std::vector<double> shift(values && !t.empty() ? static_cast<size_t>(n) : 0, 0.0);
  for (size_t r = 0; r < sv.size(); ++r)
    for (size_t c = 0; c < static_cast<size_t>(n); ++c) {
      double& x = wv[r * static_cast<size_t>(n) + c];
      if (!tv.empty()) shift[c] += tv[r] * x;
      x *= sv[r];
    }
  m.inputs[1] = add_const(g, m.inputs[1] + ".ln_scale", w.type, {k, n}, std::move(wv));
  if (t.empty()) return;
  // A row operand of N (a bias) first in the epilogue takes the shift; else a new Add does.
  if (!m.epilogue.empty() && m.epilogue[0].op == OpKind::Add && g.is_const(m.epilogue[0].operand) &&
      numel(g.tensor(m.epilogue[0].operand).shape) == n && g.tensor(m.epilogue[0].operand).shape.back() == n) {
    const TensorInfo& b = g.tensor(m.epilogue[0].operand);
    std::vector<double> bv = values && loaded(g, b.name) ? b.data->values() : std::vector<double>{};
    for (size_t c = 0; c < bv.size(); ++c) bv[c] += shift[c];
    m.epilogue[0].operand = add_const(g, b.name + ".ln_shift", b.type, b.shape, std::move(bv));
    return;
  }
  const std::string name = add_const(g, m.name + ".ln_shift", ElemType::Float, {n}, std::move(shift));
  m.epilogue.insert(m.epilogue.begin(), Epilogue{OpKind::Add, name, false, ln});
}

// Drops the constants in `maybe` that no node reads any more.
void drop_unread(Graph& g, const std::set<std::string>& maybe) {
  std::set<std::string> read;
  for (const Node& n : g.nodes) {
    for (const auto& i : n.inputs) read.insert(i);
    for (const auto& e : n.epilogue) read.insert(e.operand);
  }
  for (const std::string& t : maybe)
    if (!read.count(t) && g.is_const(t) && std::find(g.outputs.begin(), g.outputs.end(), t) == g.outputs.end()) g.tensors.erase(t);
}

// One scan over the graph: the consumer and producer maps are built once, and a node a fusion
// changed (a reader given a prologue) or removed is never part of another (the pass restarted
// after each fusion, quadratic in the LayerNorms).
struct Scan {
  const std::map<std::string, std::vector<size_t>> cons;
  const std::map<std::string, size_t> producer;
  const std::set<std::string> outputs;
  std::vector<bool> gone, touched;
  std::set<std::string> gone_tensors, maybe_unread;
  explicit Scan(const Graph& g)
      : cons(g.consumers()), producer(g.producers()), outputs(g.outputs.begin(), g.outputs.end()),
        gone(g.nodes.size(), false), touched(g.nodes.size(), false) {}
  bool free(size_t k) const { return !gone[k] && !touched[k]; }
};

struct Readers {
  std::vector<size_t> matmuls, reshapes;
  std::vector<std::string> sources;  // per MatMul: the LayerNorm's input at its A shape
};

// The LayerNorm's readers through Reshapes: every one a MatMul's A (with a weight of its own, no
// prologue yet) and nothing else; empty when any reader is not.
Readers find_readers(const Graph& g, const Scan& sc, const Node& ln) {
  const int64_t d = g.tensor(ln.inputs[0]).shape.back();
  Readers r;
  std::vector<std::string> frontier = {ln.outputs[0]};
  while (!frontier.empty()) {
    const std::string t = frontier.back();
    frontier.pop_back();
    auto it = sc.cons.find(t);
    if (it == sc.cons.end() || sc.outputs.count(t)) return {};
    for (size_t c : it->second) {
      const Node& n = g.nodes[c];
      if (!sc.free(c)) return {};
      if (n.op == OpKind::Reshape && n.inputs[0] == t) {
        frontier.push_back(n.outputs[0]);
        r.reshapes.push_back(c);
      } else if (reads_rows_as_a(g, n, t, d) && n.i("prologue_ln", 0) == 0 && sc.cons.at(n.inputs[1]).size() == 1) {
        for (const auto& e : n.epilogue)
          if (e.operand == t) return {};
        r.matmuls.push_back(c);
      } else {
        return {};
      }
    }
  }
  for (size_t c : r.matmuls) {
    r.sources.push_back(through_reshapes(g, ln.inputs[0], sc.producer, g.tensor(g.nodes[c].inputs[0]).shape));
    if (r.sources.back().empty()) return {};
  }
  return r;
}

// The LayerNorm at `i` into its readers; it and the Reshapes after it go, and the Reshapes before
// it that nothing else reads.
void fuse_one(Graph& g, Scan& sc, size_t i, const Readers& r) {
  const Node& ln = g.nodes[i];
  sc.maybe_unread.insert(ln.inputs[1]);
  if (ln.inputs.size() > 2) sc.maybe_unread.insert(ln.inputs[2]);
  for (size_t k = 0; k < r.matmuls.size(); ++k) {
    Node& m = g.nodes[r.matmuls[k]];
    sc.maybe_unread.insert(m.inputs[1]);
    if (!m.epilogue.empty()) sc.maybe_unread.insert(m.epilogue[0].operand);
    m.inputs[0] = r.sources[k];
    fold_affine(g, m, ln.inputs[1], ln.inputs.size() > 2 ? ln.inputs[2] : std::string(), ln.name);
    m.attrs["prologue_ln"] = int64_t{1};
    m.attrs["prologue_ln_epsilon"] = ln.f("epsilon", 1e-5);
    const std::string fused = m.s("fused", "");
    m.attrs["fused"] = fused.empty() ? ln.name : fused + ", " + ln.name;
    sc.touched[r.matmuls[k]] = true;
  }
  auto drop = [&](size_t k) {
    sc.gone[k] = true;
    sc.gone_tensors.insert(g.nodes[k].outputs[0]);
  };
  for (size_t k : r.reshapes) drop(k);
  std::string t = ln.inputs[0];
  for (auto p = sc.producer.find(t); p != sc.producer.end() && g.nodes[p->second].op == OpKind::Reshape; p = sc.producer.find(t)) {
    auto c = sc.cons.find(t);
    if (c == sc.cons.end() || c->second.size() != 1 || sc.outputs.count(t) || !sc.free(p->second)) break;
    if (std::find(r.sources.begin(), r.sources.end(), t) != r.sources.end()) break;  // a reader reads it now
    drop(p->second);
    t = g.nodes[p->second].inputs[0];
  }
  drop(i);
}

}  // namespace

void fuse_norm_prologues(Graph& g) {
  Scan sc(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& ln = g.nodes[i];
    if (!sc.free(i) || !fusable(g, ln) || sc.outputs.count(ln.outputs[0])) continue;
    const Readers r = find_readers(g, sc, ln);
    if (!r.matmuls.empty()) fuse_one(g, sc, i, r);
  }
  g.erase_nodes(sc.gone);
  for (const std::string& x : sc.gone_tensors) g.tensors.erase(x);
  drop_unread(g, sc.maybe_unread);
}

}  // namespace trnsim::compiler
