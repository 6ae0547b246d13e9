#include "trnsim/compiler/sbuf_residency.h"

#include "trnsim/common/checked.h"
#include "trnsim/compiler/compile.h"

#include <algorithm>
#include <map>
#include <set>

namespace trnsim::compiler {

namespace {

constexpr int64_t kAlign = 64;  // the SBUF allocator's granule, bytes per partition

bool one_core(const Node& n) { return n.i("cores", 1) <= 1; }

// [..., M, C] as (batch indices, M): a matmul tiles each batch index's M by 128, so producer
// and reader share row tiles when these agree.
std::pair<int64_t, int64_t> rows_of(const Shape& s) {
  if (s.size() < 2) return {0, 0};
  int64_t nb = 1;
  for (size_t i = 0; i + 2 < s.size(); ++i) nb = checked_mul(nb, s[i], "shape " + shape_str(s));
  return {nb, s[s.size() - 2]};
}

// Index of a fused LayerNorm in the epilogue (operands after it are row-broadcast constants).
size_t block_epilogue(const Node& n) {
  for (size_t e = 0; e < n.epilogue.size(); ++e)
    if (n.epilogue[e].op == OpKind::LayerNormalization) return e;
  return n.epilogue.size();
}

// Whether MatMul `c` reads `v` (a name of an [R, n] resident tensor) as its row-major A.
bool reads_as_a(const Graph& g, const Node& c, const std::string& v, int64_t n, std::pair<int64_t, int64_t> rows) {
  if (c.op != OpKind::MatMul || !one_core(c) || c.inputs[0] != v || c.inputs[1] == v) return false;
  const Shape& as = g.tensor(v).shape;
  const Shape& bs = g.tensor(c.inputs[1]).shape;
  if (as.size() < 2 || bs.size() < 2 || as.back() != n || as[as.size() - 2] < 2 || rows_of(as) != rows) return false;
  if (n < 2) return false;  // a K = 1 A has no contiguous row to transpose: the lowering reads it column-wise
  // A not broadcast over B's batch axes: its rows are the matmul's rows.
  const int64_t na = rows_of(as).first, nbb = rows_of(bs).first;
  return nbb == 1 || (as.size() == bs.size() && na == nbb);
}

// Whether MatMul `c` reads `v` only as a full-shape operand of its block epilogue (a residual).
bool reads_as_operand(const Graph& g, const Node& c, const std::string& v, std::pair<int64_t, int64_t> rows) {
  if (c.op != OpKind::MatMul || !one_core(c)) return false;
  const size_t pre = block_epilogue(c);
  bool any = false;
  for (size_t e = 0; e < c.epilogue.size(); ++e) {
    if (c.epilogue[e].operand != v) continue;
    if (e >= pre || g.tensor(v).shape != g.tensor(c.outputs[0]).shape || rows_of(g.tensor(v).shape) != rows) return false;
    any = true;
  }
  return any;
}

struct Candidate {
  std::string name;
  size_t producer = 0, last = 0;
  int64_t bytes = 0, offset = -1;
  bool bf16 = false, store = false;
  std::map<size_t, std::set<std::string>> names;  // node -> names it reads the tensor by
};

}  // namespace

std::string resident_attr(const std::string& name) { return "resident:" + name; }

void plan_sbuf_residency(Graph& g, const hw::ChipSpec& chip, DTypePolicy policy, std::map<size_t, Segment>* ahead) {
  for (Node& n : g.nodes)
    for (auto it = n.attrs.begin(); it != n.attrs.end();)
      it = it->first.rfind("resident:", 0) == 0 ? n.attrs.erase(it) : std::next(it);
  // Reshape outputs are aliases of their input (no kernel, same bytes).
  std::map<std::string, std::string> canon;
  auto root = [&](const std::string& t) { auto it = canon.find(t); return it == canon.end() ? t : it->second; };
  for (const Node& n : g.nodes)
    if (n.op == OpKind::Reshape) canon[n.outputs[0]] = root(n.inputs[0]);
  std::set<std::string> outputs;
  for (const auto& o : g.outputs) outputs.insert(root(o));

  std::vector<Candidate> cands;
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.op != OpKind::MatMul || !one_core(n) || n.outputs.empty()) continue;
    const TensorInfo& t = g.tensor(n.outputs[0]);
    if (t.type != ElemType::Float && t.type != ElemType::BFloat16) continue;
    if (t.shape.size() < 2 || g.tensor(n.inputs[0]).shape.size() < 2 || g.tensor(n.inputs[1]).shape.size() < 2) continue;
    if (numel(t.shape) == 0) continue;
    Candidate c;
    c.name = n.outputs[0];
    c.producer = c.last = i;
    c.bf16 = t.type == ElemType::BFloat16;
    const auto [nb, m] = rows_of(t.shape);
    // Checked: declared dims reach here before the HBM plan bounds them (fuzz).
    const std::string what = "tensor '" + c.name + "' resident in SBUF";
    const int64_t elems = checked_mul(checked_mul(nb, ceil_div(m, 128), what), t.shape.back(), what);
    c.bytes = ceil_div(checked_mul(elems, c.bf16 ? 2 : 4, what), kAlign) * kAlign;
    c.store = outputs.count(c.name) > 0;
    by_name[c.name] = cands.size();
    cands.push_back(std::move(c));
  }
  // Readers: a MatMul reading it as A or as a residual operand takes it from SBUF; any other
  // reader keeps the HBM store.
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.op == OpKind::Reshape) continue;
    std::set<std::string> read;
    for (const auto& in : n.inputs) if (!in.empty()) read.insert(in);
    for (const auto& e : n.epilogue) if (!e.operand.empty()) read.insert(e.operand);
    for (const std::string& v : read) {
      auto it = by_name.find(root(v));
      if (it == by_name.end()) continue;
      Candidate& c = cands[it->second];
      const Shape& cs = g.tensor(c.name).shape;
      const bool as_a = reads_as_a(g, n, v, cs.back(), rows_of(cs));
      bool other = false;  // reads it in any way SBUF residency does not serve
      for (size_t k = 0; k < n.inputs.size(); ++k)
        if (n.inputs[k] == v && !(k == 0 && as_a)) other = true;
      bool as_operand = false;
      for (const auto& e : n.epilogue) as_operand = as_operand || e.operand == v;
      if (as_operand && !reads_as_operand(g, n, v, rows_of(cs))) other = true;
      if (other) {
        c.store = true;
        continue;
      }
      c.names[i].insert(v);
      c.last = std::max(c.last, i);
    }
  }
  // What each kernel of a span takes without resident tensors: they must sit above it.
  std::map<size_t, int64_t> peak;
  std::map<size_t, Segment> lowered;
  for (const Candidate& c : cands)
    if (!c.names.empty())
      for (size_t i = c.producer; i <= c.last; ++i)
        if (!peak.count(i)) {
          Segment s = lower_node(g, g.nodes[i], chip, policy);
          peak[i] = s.sbuf_peak_bytes;
          lowered.emplace(i, std::move(s));
        }
  // Offsets: top-down, beside the tensors live at the same time.
  const int64_t cap = static_cast<int64_t>(chip.core.sbuf.bytes_per_partition.value());
  std::vector<const Candidate*> placed;
  for (Candidate& c : cands) {
    if (c.names.empty()) continue;
    int64_t floor = 0;
    for (size_t i = c.producer; i <= c.last; ++i) floor = std::max(floor, peak[i]);
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (const Candidate* p : placed)
      if (p->producer <= c.last && c.producer <= p->last) busy.push_back({p->offset, p->offset + p->bytes});
    std::vector<int64_t> tops = {cap};
    for (auto& [lo, hi] : busy) tops.push_back(lo);
    std::sort(tops.rbegin(), tops.rend());
    for (int64_t top : tops) {
      const int64_t lo = (top - c.bytes) / kAlign * kAlign;
      if (lo < floor) continue;
      bool clash = false;
      for (auto& [a, b] : busy) clash = clash || (lo < b && a < lo + c.bytes);
      if (!clash) {
        c.offset = lo;
        break;
      }
    }
    if (c.offset < 0) continue;
    placed.push_back(&c);
    for (size_t i = c.producer; i <= c.last; ++i) {
      // Every node of the span holds the space; only the producer and the readers accepted above
      // read it there. A node between them that reads the tensor otherwise (a MatMul split over
      // cores, a broadcast operand) takes the HBM copy: reading SBUF there gave NaN.
      auto it = c.names.find(i);
      const bool reads_here = i == c.producer || it != c.names.end();
      const std::vector<int64_t> v = {c.offset, c.bytes, c.bf16 ? 1 : 0, c.store ? 1 : 0, i == c.producer ? 1 : 0,
                                      reads_here ? 1 : 0};
      g.nodes[i].attrs[resident_attr(c.name)] = v;
      if (it != c.names.end())
        for (const std::string& alias : it->second) g.nodes[i].attrs[resident_attr(alias)] = v;
    }
  }
  if (!ahead) return;
  // A kernel whose reads and writes name no resident tensor is the one lowered above.
  for (auto& [i, s] : lowered) {
    const Node& n = g.nodes[i];
    bool uses = false;
    auto check = [&](const std::string& t) { uses = uses || (!t.empty() && n.attrs.count(resident_attr(t))); };
    for (const auto& t : n.inputs) check(t);
    for (const auto& t : n.outputs) check(t);
    for (const auto& e : n.epilogue) check(e.operand);
    if (!uses) ahead->emplace(i, std::move(s));
  }
}

}  // namespace trnsim::compiler
