#include "trnsim/compiler/fuse_attention.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "trnsim/compiler/fusion.h"
#include "trnsim/compiler/shape_util.h"

namespace trnsim::compiler {
namespace {

// The graph's producer and consumer maps, built once per round of fusions. `touched` marks the
// nodes a fusion of this round replaced or removed: a match that meets one would read stale
// maps, so it sets `stale` and is retried next round on fresh maps.
struct Matcher {
  Graph& g;
  const std::vector<bool>& touched;
  std::map<std::string, std::vector<size_t>> cons = g.consumers();
  std::map<std::string, size_t> producer = g.producers();
  std::set<std::string> outputs{g.outputs.begin(), g.outputs.end()};
  bool stale = false;

  Matcher(Graph& gr, const std::vector<bool>& t) : g(gr), touched(t) {}
  Node* at(size_t i) {
    stale = stale || touched[i];
    return &g.nodes[i];
  }
  // The node producing `t`, if one does.
  Node* prod(const std::string& t) {
    auto it = producer.find(t);
    return it == producer.end() ? nullptr : at(it->second);
  }
  // `t` is read by exactly one node and is not a graph output: it can disappear in a fusion.
  bool private_to_one(const std::string& t) {
    auto it = cons.find(t);
    if (it == cons.end()) return false;
    for (size_t c : it->second) stale = stale || touched[c];
    return it->second.size() == 1 && !outputs.count(t);
  }
  Node* sole_consumer(const std::string& t) {
    return private_to_one(t) ? at(cons.at(t)[0]) : nullptr;
  }
};

bool is_float(ElemType t) {
  return t == ElemType::Float || t == ElemType::Float16 || t == ElemType::BFloat16;
}

// A scalar constant's value.
std::optional<double> scalar_const(const Graph& g, const std::string& t) {
  if (!g.is_const(t)) return std::nullopt;
  const auto& d = *g.tensor(t).data;
  if (d.size() != 1) return std::nullopt;
  return d[0];
}

// The logical row-major tensor `t` as element strides over what it is read from: through a
// Transpose, the Transpose's input with permuted strides (the copy is then not needed, and is
// reported as fused when nothing else reads it).
std::pair<std::string, std::vector<int64_t>> look_through(Matcher& m, const std::string& t,
                                                          std::vector<std::string>& fused, std::set<const Node*>& members) {
  Node* p = m.prod(t);
  if (p && p->op == OpKind::Transpose && !m.g.is_const(p->inputs[0])) {
    if (m.private_to_one(t)) {
      fused.push_back(p->name);
      members.insert(p);
    }
    const Shape& in = m.g.tensor(p->inputs[0]).shape;
    const auto st = row_major_strides(in);
    std::vector<int64_t> perm = p->ints("perm");
    if (perm.empty())
      for (int64_t i = static_cast<int64_t>(in.size()) - 1; i >= 0; --i) perm.push_back(i);
    std::vector<int64_t> out;
    for (int64_t a : perm) out.push_back(st[static_cast<size_t>(a)]);
    return {p->inputs[0], out};
  }
  return {t, row_major_strides(m.g.tensor(t).shape)};
}

// Tries to fuse the attention block around Softmax node `si`; true if it did. The fused node
// takes the place of the P V MatMul, the other members are marked in `gone` (and `touched`).
bool try_fuse(Matcher& m, size_t si, std::vector<bool>& gone, std::vector<bool>& touched) {
  Graph& g = m.g;
  Node& sm = g.nodes[si];
  const Shape& ss = g.tensor(sm.outputs[0]).shape;
  const int64_t rank = static_cast<int64_t>(ss.size());
  if (rank < 2 || normalize_axis(sm.i("axis", -1), rank, sm.name) != rank - 1) return false;
  const ElemType et = g.tensor(sm.outputs[0]).type;
  if (!is_float(et)) return false;
  std::vector<std::string> fused;
  std::set<const Node*> members{&sm};

  // Backwards from the softmax: [Add mask] <- [Mul/Div scale] <- MatMul(Q, K^T).
  std::string x = sm.inputs[0];
  std::string mask;
  double scale = 1.0;
  Node* p = m.prod(x);
  if (p && p->op == OpKind::Add && p->epilogue.empty() && m.private_to_one(x)) {
    Node* a = m.prod(p->inputs[0]);
    Node* b = m.prod(p->inputs[1]);
    // The score side is the one produced by the scale or the QK MatMul.
    auto scoreish = [](Node* n) { return n && (n->op == OpKind::MatMul || n->op == OpKind::Mul || n->op == OpKind::Div); };
    int side = scoreish(a) && g.tensor(p->inputs[0]).shape == ss ? 0 : scoreish(b) && g.tensor(p->inputs[1]).shape == ss ? 1 : -1;
    if (side < 0) return false;
    mask = p->inputs[1 - side];
    if (!is_float(g.tensor(mask).type)) return false;
    fused.push_back(p->name);
    members.insert(p);
    x = p->inputs[side];
    p = m.prod(x);
  }
  if (p && (p->op == OpKind::Mul || p->op == OpKind::Div) && p->epilogue.empty() && m.private_to_one(x)) {
    int side = p->op == OpKind::Div ? 0 : scalar_const(g, p->inputs[1]) ? 0 : 1;
    auto c = scalar_const(g, p->inputs[1 - side]);
    if (!c || *c == 0) return false;
    scale = p->op == OpKind::Div ? 1.0 / *c : *c;
    fused.push_back(p->name);
    members.insert(p);
    x = p->inputs[side];
    p = m.prod(x);
  }
  if (!p || p->op != OpKind::MatMul || !p->epilogue.empty() || !m.private_to_one(x) || !(scale > 0)) return false;
  Node& qk = *p;
  fused.push_back(qk.name);
  members.insert(&qk);

  // Forwards: [Cast to the same float type]... -> MatMul(P, V) [-> Transpose].
  std::string y = sm.outputs[0];
  Node* c = m.sole_consumer(y);
  while (c && c->op == OpKind::Cast && g.tensor(c->outputs[0]).type == et) {
    fused.push_back(c->name);
    members.insert(c);
    y = c->outputs[0];
    c = m.sole_consumer(y);
  }
  if (!c || c->op != OpKind::MatMul || c->inputs[0] != y || !c->epilogue.empty()) return false;
  Node& pv = *c;

  // Shapes: Q [batch..., Sq, D], K^T [batch..., D, Sk], V [batch..., Sk, D], same batch axes.
  const Shape& qs = g.tensor(qk.inputs[0]).shape;
  const Shape& ks = g.tensor(qk.inputs[1]).shape;
  const Shape& vs = g.tensor(pv.inputs[1]).shape;
  const Shape& os = g.tensor(pv.outputs[0]).shape;
  if (qs.size() < 2 || ks.size() != qs.size() || vs.size() != qs.size() || ss.size() != qs.size()) return false;
  const size_t r = qs.size();
  const Shape batch(qs.begin(), qs.end() - 2);
  if (Shape(ks.begin(), ks.end() - 2) != batch || Shape(vs.begin(), vs.end() - 2) != batch) return false;
  const int64_t sq = qs[r - 2], d = qs[r - 1], sk = ks[r - 1];
  if (ks[r - 2] != d || vs[r - 2] != sk || vs[r - 1] != d || d > 128 || sq < 1 || sk < 1 || d < 1) return false;
  for (const auto& t : {qk.inputs[0], qk.inputs[1], pv.inputs[1]})
    if (g.is_const(t) || !is_float(g.tensor(t).type)) return false;
  if (numel(batch) < 1) return false;
  Shape score = batch;
  score.push_back(sq);
  score.push_back(sk);
  if (ss != score) return false;
  std::vector<int64_t> mask_strides;
  if (!mask.empty()) {
    const Shape& ms = g.tensor(mask).shape;
    if (ms.size() > score.size()) return false;
    for (size_t i = 0; i < ms.size(); ++i) {
      const int64_t dim = ms[i], want = score[score.size() - ms.size() + i];
      if (dim != 1 && dim != want) return false;
    }
    mask_strides = broadcast_strides(ms, score);
  }

  // Operands as strides over what they are read from.
  auto [q_src, q_st] = look_through(m, qk.inputs[0], fused, members);
  auto [kt_src, kt_st] = look_through(m, qk.inputs[1], fused, members);
  std::swap(kt_st[r - 1], kt_st[r - 2]);  // K^T [.., D, Sk] read as K [.., Sk, D]
  auto [v_src, v_st] = look_through(m, pv.inputs[1], fused, members);
  fused.insert(fused.begin(), sm.name);
  fused.push_back(pv.name);
  std::string out = pv.outputs[0];
  std::vector<int64_t> out_st = row_major_strides(os);
  // The output's Transpose (heads back to [B, S, H, D]) is written directly through strides.
  Node* t = m.sole_consumer(out);
  if (t && t->op == OpKind::Transpose) {
    std::vector<int64_t> perm = t->ints("perm");
    if (perm.empty())
      for (int64_t i = static_cast<int64_t>(r) - 1; i >= 0; --i) perm.push_back(i);
    const auto tst = row_major_strides(g.tensor(t->outputs[0]).shape);
    for (size_t i = 0; i < r; ++i) out_st[static_cast<size_t>(perm[i])] = tst[i];
    fused.push_back(t->name);
    members.insert(t);
    out = t->outputs[0];
  }

  Node f;
  f.op = OpKind::FusedAttention;
  f.name = pv.name;
  f.inputs = {q_src, kt_src, v_src};
  if (!mask.empty()) f.inputs.push_back(mask);
  f.outputs = {out};
  f.attrs["batch"] = batch;
  f.attrs["dims"] = std::vector<int64_t>{sq, sk, d};
  f.attrs["q_strides"] = q_st;
  f.attrs["k_strides"] = kt_st;
  f.attrs["v_strides"] = v_st;
  f.attrs["out_strides"] = out_st;
  if (!mask.empty()) f.attrs["mask_strides"] = mask_strides;
  f.attrs["scale"] = scale;
  std::string names;
  for (const auto& n : fused)
    if (n != f.name) names += (names.empty() ? "" : ", ") + n;
  f.attrs["fused"] = names;

  // Replace: the fused node takes the place of the P V MatMul (every input is produced before
  // it, every reader of the output comes after the output Transpose); the other members go.
  if (m.stale) return false;
  const auto index = [&](const Node* n) { return static_cast<size_t>(n - g.nodes.data()); };
  for (const Node* n : members) gone[index(n)] = touched[index(n)] = true;
  const size_t pv_at = index(&pv);
  gone[pv_at] = false;
  touched[pv_at] = true;
  g.nodes[pv_at] = std::move(f);
  return true;
}

}  // namespace

// Rounds of one pass each over the Softmax nodes with maps built once, then one compaction:
// linear in the nodes when blocks do not meet (a real model: one round). A match that meets a
// node fused earlier in its round is retried in the next. Rebuilding the maps for every
// candidate and restarting after each fusion was quadratic (800 blocks: 10.3 s).
int fuse_attention(Graph& g) {
  int count = 0;
  for (bool retry = true; retry;) {
    retry = false;
    std::vector<bool> gone(g.nodes.size(), false), touched(g.nodes.size(), false);
    Matcher m(g, touched);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (g.nodes[i].op != OpKind::Softmax || touched[i]) continue;
      m.stale = false;
      if (try_fuse(m, i, gone, touched)) ++count;
      else retry = retry || m.stale;
    }
    g.erase_nodes(gone);
  }
  eliminate_dead_code(g);  // the absorbed Transposes and the intermediate tensors
  return count;
}

std::vector<std::string> fused_attention_members(const Node& n) {
  std::vector<std::string> out;
  const std::string s = n.s("fused", "");
  size_t b = 0;
  while (b < s.size()) {
    size_t e = s.find(", ", b);
    if (e == std::string::npos) e = s.size();
    out.push_back(s.substr(b, e - b));
    b = e + 2;
  }
  return out;
}

}  // namespace trnsim::compiler
