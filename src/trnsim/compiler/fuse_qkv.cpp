#include "trnsim/compiler/fuse_qkv.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>

#include "trnsim/compiler/fusion.h"

namespace trnsim::compiler {
namespace {

constexpr std::array<const char*, 3> kRole = {"q", "k", "v"};

// Columns [0, n) side by side per row: out[r, i * n + c] = parts[i][r, c] (rows = values / n).
ConstData concat_columns(const std::vector<const TensorInfo*>& parts, int64_t n) {
  const ElemType type = parts[0]->type;
  const int64_t rows = static_cast<int64_t>(parts[0]->data->size()) / n;
  const int64_t total = rows * n * static_cast<int64_t>(parts.size());
  for (const TensorInfo* p : parts)
    if (!p->data->loaded()) return ConstData::shape_only(type, total);  // timing only: no values
  std::vector<std::vector<double>> v;
  for (const TensorInfo* p : parts) v.push_back(p->data->values());
  std::vector<double> out;
  out.reserve(static_cast<size_t>(total));
  for (int64_t r = 0; r < rows; ++r)
    for (const auto& x : v) out.insert(out.end(), x.begin() + r * n, x.begin() + (r + 1) * n);
  return ConstData::packed(type, std::move(out));
}

// The attention operand's strides over the fused [.., 3N] tensor: a stride that steps rows
// (a multiple of N) triples, one inside a row stays; nullopt if the view is not of that form.
std::optional<std::vector<int64_t>> widen(const std::vector<int64_t>& st, const std::vector<int64_t>& counts, int64_t n) {
  std::vector<int64_t> out;
  int64_t in_row = 0;  // the largest column reached inside a row
  for (size_t i = 0; i < st.size(); ++i) {
    if (st[i] % n == 0) {
      out.push_back(3 * st[i]);
    } else if (st[i] > 0 && st[i] < n) {
      out.push_back(st[i]);
      in_row += (counts[i] - 1) * st[i];
    } else {
      return std::nullopt;
    }
  }
  if (in_row >= n) return std::nullopt;
  return out;
}

struct Match {
  std::array<size_t, 3> mm{};  // projection MatMul nodes (q, k, v)
  int64_t k = 0, n = 0;
};

// The projections of attention node `ai`, if they can be fused.
std::optional<Match> match(const Graph& g, size_t ai, const std::map<std::string, std::vector<size_t>>& cons,
                           const std::map<std::string, size_t>& prod, const std::set<std::string>& outs) {
  const Node& fa = g.nodes[ai];
  if (fa.inputs.size() < 3 || fa.attrs.count("q_offset")) return std::nullopt;
  auto only_reader = [&](const std::string& t, size_t reader) {
    auto it = cons.find(t);
    return it != cons.end() && it->second.size() == 1 && it->second[0] == reader && !outs.count(t);
  };
  Match m;
  for (size_t i = 0; i < 3; ++i) {
    std::string t = fa.inputs[i];
    size_t reader = ai;
    for (;;) {
      if (!only_reader(t, reader)) return std::nullopt;
      auto p = prod.find(t);
      if (p == prod.end()) return std::nullopt;
      const Node& pn = g.nodes[p->second];
      if (pn.op == OpKind::Reshape && !g.is_const(pn.inputs[0])) {
        reader = p->second;
        t = pn.inputs[0];
        continue;
      }
      if (pn.op != OpKind::MatMul) return std::nullopt;
      m.mm[i] = p->second;
      break;
    }
  }
  if (m.mm[0] == m.mm[1] || m.mm[1] == m.mm[2] || m.mm[0] == m.mm[2]) return std::nullopt;
  const Node& q = g.nodes[m.mm[0]];
  for (size_t i = 0; i < 3; ++i) {
    const Node& x = g.nodes[m.mm[i]];
    if (x.inputs.size() != 2 || x.inputs[0] != q.inputs[0] || !x.attrs.empty() || !g.is_const(x.inputs[1])) return std::nullopt;
    const TensorInfo& w = g.tensor(x.inputs[1]);
    const TensorInfo& o = g.tensor(x.outputs[0]);
    if (w.shape.size() != 2 || o.type != ElemType::Float || o.shape.size() < 2) return std::nullopt;
    if (i == 0) m.k = w.shape[0], m.n = w.shape[1];
    if (w.shape[0] != m.k || w.shape[1] != m.n || w.type != g.tensor(q.inputs[1]).type || o.shape.back() != m.n) return std::nullopt;
    if (x.epilogue.size() != q.epilogue.size()) return std::nullopt;
    for (size_t e = 0; e < x.epilogue.size(); ++e) {
      const Epilogue& a = x.epilogue[e];
      const Epilogue& b = q.epilogue[e];
      if (a.op != b.op || a.operand_first != b.operand_first || a.operand.empty() != b.operand.empty()) return std::nullopt;
      if (a.operand.empty()) continue;
      if (!g.is_const(a.operand)) return std::nullopt;
      const TensorInfo& c = g.tensor(a.operand);
      if (c.shape != Shape{m.n} || c.type != g.tensor(b.operand).type) return std::nullopt;
    }
  }
  // One row tile (a single sequence of <= 128 tokens): the projections stream their weights,
  // and three nodes load the next one's weight under the current one's compute (cross-node
  // dependencies) better than one node's own weight ring does; fusing only lengthens the chain
  // the attention waits for (RoBERTa-large at batch 1: 4.49 -> 4.70 ms). With more rows each
  // weight block is reused and TensorE runs longer streams, which is what fusion buys.
  const Shape& os = g.tensor(q.outputs[0]).shape;
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < os.size(); ++i) rows *= os[i];
  if (rows <= 128) return std::nullopt;
  return m;
}

// Fuses the match of attention node `ai` in place: the fused projection takes the first
// projection's place, the attention its own; the other two projections are marked in `gone`.
bool fuse_one(Graph& g, size_t ai, const Match& m, std::vector<bool>& gone) {
  Node fa = g.nodes[ai];
  const Shape batch = fa.ints("batch");
  const auto dims = fa.ints("dims");
  std::array<std::vector<int64_t>, 3> st;
  for (size_t i = 0; i < 3; ++i) {
    std::vector<int64_t> counts(batch.begin(), batch.end());
    counts.push_back(i == 0 ? dims[0] : dims[1]);
    counts.push_back(dims[2]);
    auto w = widen(fa.ints(std::string(kRole[i]) + "_strides"), counts, m.n);
    if (!w) return false;
    st[i] = *w;
  }
  const Node& q = g.nodes[m.mm[0]];
  Node f = q;
  std::vector<const TensorInfo*> ws;
  for (size_t mm : m.mm) ws.push_back(&g.tensor(g.nodes[mm].inputs[1]));
  TensorInfo w{g.fresh(q.inputs[1] + ".qkv"), ws[0]->type, {m.k, 3 * m.n}, true, {}, concat_columns(ws, m.n)};
  f.inputs[1] = w.name;
  for (size_t e = 0; e < f.epilogue.size(); ++e) {
    if (f.epilogue[e].operand.empty()) continue;
    std::vector<const TensorInfo*> cs;
    for (size_t mm : m.mm) cs.push_back(&g.tensor(g.nodes[mm].epilogue[e].operand));
    TensorInfo c{g.fresh(f.epilogue[e].operand + ".qkv"), cs[0]->type, {3 * m.n}, true, {}, concat_columns(cs, m.n)};
    f.epilogue[e].operand = c.name;
    g.tensors[c.name] = std::move(c);
  }
  TensorInfo out = g.tensor(q.outputs[0]);
  out.name = g.fresh(q.outputs[0] + ".qkv");
  out.shape.back() = 3 * m.n;
  f.outputs = {out.name};
  f.attrs["fused"] = g.nodes[m.mm[1]].name + ", " + g.nodes[m.mm[2]].name;
  g.tensors[w.name] = std::move(w);
  for (size_t i = 0; i < 3; ++i) {
    fa.inputs[i] = out.name;
    fa.attrs[std::string(kRole[i]) + "_strides"] = st[i];
    fa.attrs[std::string(kRole[i]) + "_offset"] = static_cast<int64_t>(i) * m.n;
  }
  g.tensors[out.name] = std::move(out);
  const size_t first = std::min({m.mm[0], m.mm[1], m.mm[2]});
  for (size_t mm : m.mm) gone[mm] = mm != first;
  g.nodes[first] = std::move(f);
  g.nodes[ai] = std::move(fa);
  return true;
}

}  // namespace

// One pass over the graph as it was (a match's projections and Reshapes are read by its
// attention alone, so matches are disjoint and one fusion cannot change another's), then one
// compaction: linear in the nodes. Restarting after each fusion, with the maps rebuilt and the
// node list copied, was quadratic in the attention blocks.
int fuse_qkv(Graph& g) {
  const auto cons = g.consumers();
  const std::map<std::string, size_t> prod = g.producers();
  const std::set<std::string> outs(g.outputs.begin(), g.outputs.end());
  std::vector<bool> gone(g.nodes.size(), false);
  int count = 0;
  for (size_t ai = 0; ai < g.nodes.size(); ++ai) {
    if (g.nodes[ai].op != OpKind::FusedAttention) continue;
    if (const auto m = match(g, ai, cons, prod, outs); m && fuse_one(g, ai, *m, gone)) ++count;
  }
  g.erase_nodes(gone);
  if (count) eliminate_dead_code(g);  // the Reshapes the attention no longer reads
  return count;
}

}  // namespace trnsim::compiler
