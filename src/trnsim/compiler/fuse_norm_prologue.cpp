#include "trnsim/compiler/fuse_norm_prologue.h"

#include <set>

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
  return s.size() >= 2 && s.back() == d && s[s.size() - 2] > 1;
}

}  // namespace

void fuse_norm_prologues(Graph& g) {
  std::set<std::string> outputs(g.outputs.begin(), g.outputs.end());
  bool changed = true;
  while (changed) {
    changed = false;
    const auto cons = g.consumers();
    std::map<std::string, size_t> producer;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      for (const auto& o : g.nodes[i].outputs) producer[o] = i;
    for (size_t i = 0; i < g.nodes.size() && !changed; ++i) {
      const Node& ln = g.nodes[i];
      if (!fusable(g, ln) || outputs.count(ln.outputs[0])) continue;
      const int64_t d = g.tensor(ln.inputs[0]).shape.back();
      // Readers through Reshapes to the MatMuls' A: every one a MatMul's A and nothing else.
      std::vector<std::string> frontier = {ln.outputs[0]};
      std::vector<size_t> readers, reshapes;
      bool ok = true;
      while (ok && !frontier.empty()) {
        const std::string t = frontier.back();
        frontier.pop_back();
        auto it = cons.find(t);
        if (it == cons.end() || outputs.count(t)) { ok = false; break; }
        for (size_t c : it->second) {
          const Node& n = g.nodes[c];
          if (n.op == OpKind::Reshape && n.inputs[0] == t) {
            frontier.push_back(n.outputs[0]);
            reshapes.push_back(c);
          } else if (reads_rows_as_a(g, n, t, d)) {
            for (const auto& e : n.epilogue) ok = ok && e.operand != t;
            readers.push_back(c);
          } else {
            ok = false;
          }
        }
      }
      if (!ok || readers.empty()) continue;
      // Each reader reads the LayerNorm's input at its own A shape (the input or a Reshape of it).
      std::vector<std::string> sources;
      for (size_t c : readers) {
        sources.push_back(through_reshapes(g, ln.inputs[0], producer, g.tensor(g.nodes[c].inputs[0]).shape));
        ok = ok && !sources.back().empty();
      }
      if (!ok) continue;
      for (size_t r = 0; r < readers.size(); ++r) {
        Node& m = g.nodes[readers[r]];
        m.inputs[0] = sources[r];
        m.attrs["prologue_ln"] = int64_t{1};
        m.attrs["prologue_ln_epsilon"] = ln.f("epsilon", 1e-5);
        m.attrs["prologue_ln_scale"] = ln.inputs[1];
        m.attrs["prologue_ln_bias"] = ln.inputs.size() > 2 ? ln.inputs[2] : std::string();
        const std::string fused = m.s("fused", "");
        m.attrs["fused"] = fused.empty() ? ln.name : fused + ", " + ln.name;
      }
      // The LayerNorm and the Reshapes after it go; Reshapes before it go if nothing else reads them.
      std::set<size_t> drop(reshapes.begin(), reshapes.end());
      drop.insert(i);
      std::set<std::string> gone;
      for (size_t d : drop) gone.insert(g.nodes[d].outputs[0]);
      std::string t = ln.inputs[0];
      for (auto p = producer.find(t); p != producer.end() && g.nodes[p->second].op == OpKind::Reshape; p = producer.find(t)) {
        auto c = cons.find(t);
        if (c == cons.end() || c->second.size() != 1 || outputs.count(t)) break;
        bool read_by_reader = false;
        for (const std::string& s : sources) read_by_reader = read_by_reader || s == t;
        if (read_by_reader) break;
        drop.insert(p->second);
        gone.insert(t);
        t = g.nodes[p->second].inputs[0];
      }
      std::vector<Node> kept;
      for (size_t k = 0; k < g.nodes.size(); ++k)
        if (!drop.count(k)) kept.push_back(std::move(g.nodes[k]));
      g.nodes = std::move(kept);
      for (const std::string& x : gone) g.tensors.erase(x);
      changed = true;
    }
  }
}

}  // namespace trnsim::compiler
