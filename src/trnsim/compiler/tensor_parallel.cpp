#include "trnsim/compiler/tensor_parallel.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "trnsim/common/error.h"
#include "trnsim/compiler/core_split.h"
#include "trnsim/compiler/decompose.h"
#include "trnsim/compiler/fuse_attention.h"
#include "trnsim/compiler/fusion.h"
#include "trnsim/compiler/graph_edit.h"
#include "trnsim/compiler/op_params.h"
#include "trnsim/compiler/pass_runner.h"
#include "trnsim/compiler/shape_inference.h"
#include "trnsim/compiler/tp_rules.h"

namespace trnsim::compiler {
namespace {

// Fusion put element-wise consumers of MatMuls into epilogues; the split has to see them as
// nodes (a bias after a row-parallel MatMul must be added once, after the all-reduce).
void unfuse_epilogues(Graph& g) {
  std::vector<Node> out;
  for (auto& n : g.nodes) {
    if (n.epilogue.empty()) {
      out.push_back(std::move(n));
      continue;
    }
    const std::string final_out = n.outputs[0];
    std::vector<Epilogue> eps = std::move(n.epilogue);
    n.epilogue.clear();
    std::string prev = g.fresh(final_out);
    TensorInfo ti = g.tensor(final_out);
    ti.name = prev;
    g.tensors[prev] = ti;
    n.outputs[0] = prev;
    out.push_back(std::move(n));
    for (size_t k = 0; k < eps.size(); ++k) {
      const Epilogue& e = eps[k];
      std::string o = k + 1 == eps.size() ? final_out : g.fresh(final_out);
      if (o != final_out) {
        ti.name = o;
        g.tensors[o] = ti;
      }
      Node m;
      m.op = e.op;
      m.name = e.fused_node;
      if (op_info(e.op).cls == OpClass::Binary) m.inputs = e.operand_first ? std::vector{e.operand, prev} : std::vector{prev, e.operand};
      else m.inputs = {prev};
      m.outputs = {o};
      out.push_back(std::move(m));
      prev = o;
    }
  }
  g.nodes = std::move(out);
}

// The result of the sharding analysis for a set of enabled column-parallel MatMuls.
struct Analysis {
  std::map<std::string, int64_t> split;    // tensor -> split axis (absent: replicated)
  std::vector<TpConstSlice> slices;
  std::vector<size_t> shape_rewrites;      // Reshape/Expand nodes whose target shape shrinks
  std::vector<size_t> rows;                // row-parallel MatMuls
  std::vector<size_t> columns;
  // Per region (union-find over split tensors): its column MatMuls and why it failed.
  std::vector<int> parent;
  std::map<size_t, int> node_region;       // column MatMul -> region
  std::map<int, std::string> structural, divisibility;
  std::map<int, bool> has_row;
  // Vocabulary-parallel regions (no row-parallel MatMul; split graph outputs, all-gathered).
  std::map<int, std::vector<std::string>> gathered;

  int find(int r) { return parent[r] == r ? r : parent[r] = find(parent[r]); }
  int unite(int a, int b) {
    a = find(a), b = find(b);
    if (a != b) parent[b] = a;
    return a;
  }
};

// The output axis of the split, or -1 with `why` set; `partial` for a row-parallel MatMul:
// the op unit's tensor-parallel rule (OpRules::tp_axis, tp_rules.h).
int64_t propagate(const Graph& g, size_t ni, Analysis& a, bool& partial, std::string& why) {
  const Node& n = g.nodes[ni];
  TpCtx c{g, ni, n, a.split, a.slices, a.shape_rewrites};
  int64_t axis = -1;
  if (n.outputs.size() != 1) axis = c.refuse("more than one output");
  else if (const auto rule = op_rules(n.op).tp_axis) axis = rule(c);
  else axis = c.no_rule();
  partial = c.partial;
  why = c.why;
  return axis;
}

int64_t rank_of(const Graph& g, const std::string& t) { return static_cast<int64_t>(g.tensor(t).shape.size()); }

bool is_column_candidate(const Graph& g, const Node& n) {
  if (n.op != OpKind::MatMul || n.inputs.size() != 2) return false;
  const TensorInfo& b = g.tensor(n.inputs[1]);
  return b.is_const() && b.shape.size() == 2 && b.shape[1] > 1 && !g.is_const(n.inputs[0]) && rank_of(g, n.inputs[0]) >= 2;
}

Analysis analyse(const Graph& g, int tp, const std::set<size_t>& disabled) {
  Analysis a;
  std::map<std::string, int> tregion;  // split tensor -> region
  auto check_div = [&](const Node& n, int reg, int64_t axis) {
    const Shape& s = g.tensor(n.outputs[0]).shape;
    if (s[static_cast<size_t>(axis)] % tp != 0 && !a.divisibility.count(a.find(reg))) {
      std::string what = n.op == OpKind::MatMul && g.is_const(n.inputs[1])
                             ? fmt::format("output dimension {} (columns of weight '{}')", s[static_cast<size_t>(axis)], n.inputs[1])
                             : fmt::format("axis {} of its output {} (size {})", axis, shape_str(s), s[static_cast<size_t>(axis)]);
      a.divisibility[a.find(reg)] = fmt::format("{}: {} does not divide by tp={}", node_label(n), what, tp);
    }
  };
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    const Node& n = g.nodes[ni];
    int reg = -1;
    for (const auto& t : n.inputs)
      if (auto it = tregion.find(t); it != tregion.end()) reg = reg < 0 ? a.find(it->second) : a.unite(reg, it->second);
    if (reg < 0) {
      if (is_column_candidate(g, n) && !disabled.count(ni)) {
        reg = static_cast<int>(a.parent.size());
        a.parent.push_back(reg);
        a.node_region[ni] = reg;
        a.columns.push_back(ni);
        a.slices.push_back({ni, 1, 1});
        const int64_t axis = rank_of(g, n.outputs[0]) - 1;
        a.split[n.outputs[0]] = axis;
        tregion[n.outputs[0]] = reg;
        check_div(n, reg, axis);
      }
      continue;
    }
    bool partial = false;
    std::string why;
    const int64_t axis = propagate(g, ni, a, partial, why);
    reg = a.find(reg);
    if (partial) {
      a.rows.push_back(ni);
      a.has_row[reg] = true;
      continue;
    }
    if (axis < 0) {
      if (!a.structural.count(reg)) a.structural[reg] = why;
      continue;
    }
    a.split[n.outputs[0]] = axis;
    tregion[n.outputs[0]] = reg;
    check_div(n, reg, axis);
  }
  // Merged regions: move the records to their roots.
  std::map<int, std::string> st, dv;
  std::map<int, bool> hr;
  for (auto& [r, w] : a.structural) st.emplace(a.find(r), w);
  for (auto& [r, w] : a.divisibility) dv.emplace(a.find(r), w);
  for (auto& [r, w] : a.has_row) hr[a.find(r)] = hr[a.find(r)] || w;
  // A split graph output: a region without a row-parallel MatMul whose every split consumer
  // propagates (the LM head's logits) is vocabulary-parallel, its outputs all-gathered; in a
  // region with a row-parallel MatMul it is a structural refusal (the output would need both).
  std::map<int, std::vector<std::string>> gathered;
  for (const auto& o : g.outputs)
    if (auto it = tregion.find(o); it != tregion.end()) {
      const int r = a.find(it->second);
      if (st.count(r)) continue;
      if (hr[r]) st[r] = fmt::format("graph output '{}' would be split", o);
      else gathered[r].push_back(o);
    }
  for (auto& [r, outs] : gathered)
    if (st.count(r)) outs.clear();
    else if (auto d = dv.find(r); d != dv.end()) {  // a vocabulary that does not divide: replicated
      st[r] = fmt::format("vocabulary-parallel output '{}': {}", outs.front(), d->second);
      dv.erase(d);
      outs.clear();
    }
  std::erase_if(gathered, [](const auto& kv) { return kv.second.empty(); });
  for (auto& [ni, r] : a.node_region)
    if (!hr[a.find(r)] && !st.count(a.find(r)) && !gathered.count(a.find(r))) st[a.find(r)] = "no row-parallel MatMul closes it";
  a.structural = std::move(st), a.divisibility = std::move(dv), a.has_row = std::move(hr), a.gathered = std::move(gathered);
  return a;
}

// Rank r's block of a constant split along `axis`, in the constant's own form: bytes of its
// type (an initialiser), decoded values, or shape-only (timing-only: no values to slice).
ConstData slice_block(const ConstData& d, ElemType type, const Shape& s, int64_t axis, int tp, int r) {
  const int64_t outer = numel(Shape(s.begin(), s.begin() + axis)), dim = s[static_cast<size_t>(axis)];
  const int64_t inner = numel(Shape(s.begin() + axis + 1, s.end())), chunk = dim / tp;
  if (!d.loaded()) return ConstData::shape_only(type, outer * chunk * inner);
  if (d.is_encoded() && d.encoding() != ElemType::Float4E2M1) {  // whole elements per byte: slice the bytes
    const int64_t eb = encoded_bytes(d.encoding(), 1);
    std::string bytes;
    bytes.reserve(static_cast<size_t>(outer * chunk * inner * eb));
    for (int64_t o = 0; o < outer; ++o)
      bytes.append(d.bytes().substr(static_cast<size_t>((o * dim + r * chunk) * inner * eb), static_cast<size_t>(chunk * inner * eb)));
    return ConstData::owned(d.encoding(), outer * chunk * inner, std::move(bytes));
  }
  std::vector<double> v;
  v.reserve(static_cast<size_t>(outer * chunk * inner));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < chunk * inner; ++k) v.push_back(d[static_cast<size_t>((o * dim + r * chunk) * inner + k)]);
  }
  return v;
}

// Moves the nodes after each row-parallel MatMul that do not depend on its all-reduce ahead of
// those that do (stable otherwise), so the compute stream has work while the fabric sums.
// `result_of` maps each partial to the tensor its all-reduce produces.
void order_for_overlap(Graph& g, const std::map<std::string, std::string>& result_of) {
  std::set<std::string> done;
  for (;;) {
    size_t p = g.nodes.size();
    for (size_t i = 0; i < g.nodes.size() && p == g.nodes.size(); ++i)
      if (result_of.count(g.nodes[i].outputs[0]) && !done.count(g.nodes[i].outputs[0])) p = i;
    if (p == g.nodes.size()) return;
    done.insert(g.nodes[p].outputs[0]);
    std::set<std::string> dep{result_of.at(g.nodes[p].outputs[0])};
    std::vector<Node> indep, depend;
    for (size_t i = p + 1; i < g.nodes.size(); ++i) {
      Node& n = g.nodes[i];
      const bool d = std::any_of(n.inputs.begin(), n.inputs.end(), [&](const std::string& t) { return dep.count(t) > 0; });
      if (d) {
        dep.insert(n.outputs.begin(), n.outputs.end());
        // A dependent row-parallel MatMul makes its own sum (an input of the graph) dependent.
        if (auto r = result_of.find(n.outputs[0]); r != result_of.end()) dep.insert(r->second);
      }
      (d ? depend : indep).push_back(std::move(n));
    }
    g.nodes.resize(p + 1);
    for (auto& n : indep) g.nodes.push_back(std::move(n));
    for (auto& n : depend) g.nodes.push_back(std::move(n));
  }
}

}  // namespace

TensorParallelPlan shard_tensor_parallel(Graph g, int tp, const ShardOptions& opt) {
  if (tp < 1) throw ConfigError(fmt::format("tensor parallelism: tp must be at least 1, got {}", tp));
  unfuse_epilogues(g);
  // Regions that cannot be split are switched off (their column MatMuls replicated) until the
  // analysis is stable: a region's failure can only remove regions, so this terminates.
  std::set<size_t> disabled;
  std::vector<std::string> notes;
  Analysis a;
  for (;;) {
    a = analyse(g, tp, disabled);
    bool changed = false;
    for (auto& [ni, r] : a.node_region)
      if (auto it = a.structural.find(a.find(r)); it != a.structural.end()) {
        disabled.insert(ni);
        notes.push_back(fmt::format("{} left replicated: {}", node_label(g.nodes[ni]), it->second));
        changed = true;
      }
    if (!changed) break;
  }
  if (a.columns.empty()) {
    std::string why = notes.empty() ? "no MatMul with a constant 2-D weight" : notes.front();
    for (size_t i = 1; i < notes.size() && i < 4; ++i) why += "; " + notes[i];
    throw UnsupportedError(fmt::format("unsupported: tensor parallelism (tp={}): no column/row-parallel MatMul pair to split ({})", tp, why));
  }
  for (auto& [r, why] : a.divisibility) throw ShapeError(fmt::format("tensor parallelism: {}", why));

  TensorParallelPlan plan;
  plan.tp = tp;
  plan.notes = std::move(notes);
  for (size_t ni : a.columns) plan.column_parallel.push_back(g.nodes[ni].name);
  for (size_t ni : a.rows) plan.row_parallel.push_back(g.nodes[ni].name);
  std::set<std::string> gathered_outputs;
  for (const auto& [r, outs] : a.gathered) gathered_outputs.insert(outs.begin(), outs.end());
  for (size_t ni : a.columns)
    if (a.gathered.count(a.find(a.node_region.at(ni)))) plan.vocab_parallel.push_back(g.nodes[ni].name);
  std::map<std::string, Shape> whole_shape;  // of the gathered outputs, before the split
  for (const auto& o : gathered_outputs) whole_shape[o] = g.tensor(o).shape;

  // The rank-independent part of the shard graph: split shapes, shrunk shape constants, the
  // partial outputs and all-reduced inputs; sliced constants get their data per rank below.
  // The weights to slice keep their data here, not in `base` (a model's weights are copied once).
  std::map<std::string, TensorInfo> sources;
  for (const auto& sl : a.slices) {
    const std::string& t = g.nodes[sl.node].inputs[sl.input];
    if (!sources.count(t)) sources.emplace(t, std::move(g.tensor(t)));
  }
  for (const auto& [t, ti] : sources) {
    TensorInfo& stub = g.tensor(t);
    stub.name = ti.name, stub.type = ti.type, stub.shape = ti.shape, stub.shape_known = true, stub.data = std::vector<double>{};
  }
  Graph base = std::move(g);
  for (const auto& [t, axis] : a.split) base.tensor(t).shape[static_cast<size_t>(axis)] /= tp;
  GraphEditor ed(base);
  for (size_t ni : a.shape_rewrites) {
    Node& n = base.nodes[ni];
    const Shape& s = base.tensor(n.outputs[0]).shape;
    n.inputs[1] = ed.ints(n.name + ".tp_shape", s);
  }
  struct SlicedConst {
    std::string source, name;
    int64_t axis;
  };
  std::vector<SlicedConst> sliced;
  std::map<std::pair<std::string, int64_t>, std::string> slice_names;
  for (const auto& s : a.slices) {
    Node& n = base.nodes[s.node];
    const std::string src = n.inputs[s.input];
    auto key = std::make_pair(src, s.axis);
    auto it = slice_names.find(key);
    if (it == slice_names.end()) {
      TensorInfo ti = base.tensor(src);
      ti.name = base.fresh(fmt::format("{}.tp_slice{}", src, s.axis));
      ti.shape[static_cast<size_t>(s.axis)] /= tp;
      ti.data = std::vector<double>{};  // each rank's copy of `base` gets its own block below
                                        // (no zero fill here, no copy of it per rank)
      base.tensors[ti.name] = ti;
      sliced.push_back({src, ti.name, s.axis});
      it = slice_names.emplace(key, ti.name).first;
    }
    n.inputs[s.input] = it->second;
  }
  for (const auto& n : base.nodes)  // a weight also read unsliced (shared) keeps its data
    for (const auto& t : n.inputs)
      if (auto it = sources.find(t); it != sources.end() && base.tensor(t).data->empty()) base.tensor(t).data = it->second.data;
  std::map<std::string, std::string> result_of;
  std::map<std::string, size_t> ar_of_partial;
  std::vector<TpCollective> collectives;
  // Vocabulary-parallel outputs: the shard writes its block under a new name, which replaces
  // the whole output among the shard graph's outputs; the all-gather assembles the whole.
  for (auto& n : base.nodes) {
    if (n.outputs.empty() || !gathered_outputs.count(n.outputs[0])) continue;
    const std::string y = n.outputs[0];
    TpCollective c;
    c.kind = TpCollective::Kind::AllGather;
    c.node = n.name;
    c.result = y;
    c.partial = base.fresh(y + ".tp_block");
    c.shape = whole_shape.at(y);
    c.axis = a.split.at(y);
    c.type = base.tensor(y).type;
    c.bytes = numel(c.shape) * activation_bytes(c.type);
    TensorInfo ti = base.tensor(y);
    ti.name = c.partial;
    base.tensors[c.partial] = ti;
    base.tensors.erase(y);
    n.outputs[0] = c.partial;
    std::replace(base.outputs.begin(), base.outputs.end(), y, c.partial);
    ar_of_partial[c.partial] = collectives.size();
    collectives.push_back(c);
  }
  for (const auto& c : collectives)  // readers of a gathered output read the rank's block
    for (auto& n : base.nodes)
      std::replace(n.inputs.begin(), n.inputs.end(), c.result, c.partial);
  for (size_t ni : a.rows) {
    Node& n = base.nodes[ni];
    const std::string y = n.outputs[0];
    TpCollective ar;
    ar.node = n.name;
    ar.result = y;
    ar.partial = base.fresh(y + ".tp_partial");
    ar.shape = base.tensor(y).shape;
    ar.type = base.tensor(y).type;
    ar.bytes = numel(ar.shape) * activation_bytes(ar.type);
    TensorInfo ti = base.tensor(y);
    ti.name = ar.partial;
    base.tensors[ar.partial] = ti;
    n.outputs[0] = ar.partial;
    base.inputs.push_back(y);
    base.outputs.push_back(ar.partial);
    result_of[ar.partial] = y;
    ar_of_partial[ar.partial] = collectives.size();
    collectives.push_back(ar);
  }
  // The all-reduce results are inputs of the shard graph, so check() no longer orders their
  // readers after the MatMul; order_for_overlap keeps them there (it only moves independents).
  order_for_overlap(base, result_of);
  eliminate_dead_code(base);

  const int build = opt.ranks_to_build <= 0 ? tp : std::min(opt.ranks_to_build, tp);
  for (int r = 0; r < build; ++r) {
    Graph s = base;
    for (const auto& c : sliced) {
      const TensorInfo& src = sources.at(c.source);
      s.tensor(c.name).data = slice_block(*src.data, src.type, src.shape, c.axis, tp, r);
    }
    // Shape inference over the shard must agree with the split the analysis derived.
    for (const auto& n : s.nodes) {
      std::vector<Shape> want;
      for (const auto& o : n.outputs) want.push_back(s.tensor(o).shape);
      infer_node(s, n);
      for (size_t i = 0; i < n.outputs.size(); ++i)
        if (s.tensor(n.outputs[i]).shape != want[i])
          throw Error(fmt::format("tensor parallelism: shard shape of '{}' is {}, shape inference gives {} (node '{}')",
                                  n.outputs[i], shape_str(want[i]), shape_str(s.tensor(n.outputs[i]).shape), n.name));
    }
    CompileOptions so;
    PassState st{s, so};
    st.cores = opt.cores;
    std::vector<std::string_view> passes;
    if (opt.fuse) passes = {"attention-fusion", "fusion", "elementwise-fusion"};
    passes.push_back("dead-code");
    if (opt.cores > 0) passes.push_back("core-split");
    run_passes(st, passes);
    plan.shards.push_back(std::move(s));
  }
  // Steps from rank 0's fused graph (all ranks have the same structure).
  const Graph& s0 = plan.shards.front();
  size_t begin = 0;
  for (size_t i = 0; i < s0.nodes.size(); ++i)
    if (auto it = ar_of_partial.find(s0.nodes[i].outputs[0]); it != ar_of_partial.end()) {
      plan.steps.push_back({begin, i + 1, static_cast<int>(plan.collectives.size())});
      plan.collectives.push_back(collectives[it->second]);
      begin = i + 1;
    }
  if (begin < s0.nodes.size() || plan.steps.empty()) plan.steps.push_back({begin, s0.nodes.size(), -1});
  return plan;
}

int activation_bytes(ElemType t) { return t == ElemType::Float16 || t == ElemType::BFloat16 ? 2 : 4; }

Graph prepare_for_tensor_parallel(Graph g, const CompileOptions& opt) {
  PassState st{g, opt};
  run_passes(st, front_passes());
  return g;
}

}  // namespace trnsim::compiler
