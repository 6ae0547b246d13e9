#include "trnsim/compiler/fusion.h"

#include <algorithm>
#include <set>

#include "trnsim/compiler/host_eval.h"

namespace trnsim::compiler {

bool epilogue_op(OpKind k) {
  switch (k) {
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Max:
    case OpKind::Min: case OpKind::Relu: case OpKind::Sigmoid: case OpKind::Tanh: case OpKind::Exp:
    case OpKind::Erf: case OpKind::Sqrt: case OpKind::Neg: case OpKind::Abs: case OpKind::Gelu: return true;
    default: return false;
  }
}

namespace {

// Widest row a matmul keeps in SBUF for a fused LayerNorm (fp32, two rows in flight).
constexpr int64_t kMaxLayerNormRow = 4096;

// A LayerNorm over the last axis of a matmul's only consumer, with constant scale and bias
// of one value per column, becomes the matmul's epilogue: normalise the result row in SBUF
// (the library kernel's steps), then scale and shift as two row-broadcast epilogue ops. The
// pre-norm sum then never goes to HBM, as Neuron keeps a layer's activations on chip.
// `x` is the LayerNorm's input: the matmul's result `y` or a Reshape of it that keeps its rows.
bool fuse_layernorm(Graph& g, Node& m, const Node& ln, const std::string& y, const std::string& x) {
  // The MX and 4:16-sparse kernels apply element-wise epilogues only (no row-wide LayerNorm),
  // and so does the convolution's GEMM (lower_conv.cpp).
  if (m.op == OpKind::MatMulMx || m.op == OpKind::ConvGemm || m.i("sparse_4_16", 0)) return false;
  const Shape& ys = g.tensor(y).shape;
  const Shape& xs = g.tensor(x).shape;
  if (ys.size() < 2 || xs.empty() || xs.back() != ys.back() || ln.inputs.size() < 3 || ln.inputs[0] != x ||
      g.tensor(ln.outputs[0]).shape != xs)
    return false;
  for (size_t o = 1; o < ln.outputs.size(); ++o)
    if (!ln.outputs[o].empty()) return false;  // Mean / InvStdDev outputs are read elsewhere
  const int64_t axis = ln.i("axis", -1);
  if (axis != -1 && axis != static_cast<int64_t>(xs.size()) - 1) return false;
  const int64_t n = ys.back();
  if (n > kMaxLayerNormRow || g.tensor(ln.outputs[0]).type != ElemType::Float) return false;
  for (size_t i = 1; i < 3; ++i)
    if (ln.inputs[i].empty() || !g.is_const(ln.inputs[i]) || numel(g.tensor(ln.inputs[i]).shape) != n) return false;
  m.attrs["ln_epsilon"] = ln.f("epsilon", 1e-5);
  m.epilogue.push_back({OpKind::LayerNormalization, "", false, ln.name});
  m.epilogue.push_back({OpKind::Mul, ln.inputs[1], false, ln.name});
  m.epilogue.push_back({OpKind::Add, ln.inputs[2], false, ln.name});
  return true;
}

}  // namespace

namespace {

// The state of one fusion sweep: consumers and producers are computed once; a fused node is
// marked dead rather than erased, so every index stays valid (a restart after each fusion,
// recomputing both maps, was quadratic: an RNN unrolled over 4,096 steps compiled for minutes;
// fuzz). Fusing into node i only changes what node i and its consumers see, never what an
// earlier node sees (an operand must be produced before i), so one pass in order suffices.
struct Sweep {
  Graph& g;
  std::map<std::string, std::vector<size_t>> cons = g.consumers();
  std::set<std::string> outputs{g.outputs.begin(), g.outputs.end()};
  std::map<std::string, size_t> producer = g.producers();  // an operand is only fused if it exists before the MatMul runs
  std::vector<bool> dead = std::vector<bool>(g.nodes.size(), false);

  explicit Sweep(Graph& graph) : g(graph) {}
  // Node i now writes what node `gone` wrote (renamed from `y`); `gone` is dead.
  void absorb(size_t i, size_t gone, const std::string& y, const std::string& out) {
    g.tensors.erase(y);
    g.nodes[i].outputs[0] = out;
    producer[out] = i;
    dead[gone] = true;
  }
  bool fuse_one(size_t i);
};

bool Sweep::fuse_one(size_t i) {
  Node& m = g.nodes[i];
  if (m.op != OpKind::MatMul && m.op != OpKind::MatMulMx && (m.op != OpKind::ConvGemm || m.i("group", 1) > 1)) return false;
  const std::string y = m.outputs[0];
  auto it = cons.find(y);
  if (it == cons.end() || it->second.size() != 1 || outputs.count(y)) return false;
  const size_t ci = it->second[0];
  Node& c = g.nodes[ci];
  // A Reshape that keeps the shape is a decomposition's rename of its result (finish() in
  // decompose_steps.h), no data movement: the producer writes the renamed tensor, so what
  // follows (a BatchNormalization's Relu, a residual Add) can fuse as well.
  if (c.op == OpKind::Reshape && g.tensor(c.outputs[0]).shape == g.tensor(y).shape &&
      g.tensor(c.outputs[0]).type == g.tensor(y).type) {
    absorb(i, ci, y, c.outputs[0]);
    return true;
  }
  // A LayerNorm over the rows ends the epilogue: what follows it is another node's.
  if (std::any_of(m.epilogue.begin(), m.epilogue.end(), [](const Epilogue& e) { return e.op == OpKind::LayerNormalization; }))
    return false;
  if (c.op == OpKind::LayerNormalization) {
    if (!fuse_layernorm(g, m, c, y, y)) return false;
    absorb(i, ci, y, c.outputs[0]);
    return true;
  }
  // Through a Reshape to rows (the decomposition's 2-D LayerNorm): the Reshape then
  // yields the normalised rows and the LayerNorm node goes.
  if (c.op == OpKind::Reshape && !outputs.count(c.outputs[0])) {
    auto lc = cons.find(c.outputs[0]);
    if (lc == cons.end() || lc->second.size() != 1) return false;
    const size_t li = lc->second[0];
    const Node& ln = g.nodes[li];
    if (ln.op != OpKind::LayerNormalization || !fuse_layernorm(g, m, ln, y, c.outputs[0])) return false;
    const std::string rows = c.outputs[0];
    absorb(ci, li, rows, ln.outputs[0]);
    return true;
  }
  if (!epilogue_op(c.op) || g.tensor(c.outputs[0]).shape != g.tensor(y).shape) return false;
  // GELU's form travels on the MatMul (apply_elementwise reads the node's `approximate`).
  if (c.op == OpKind::Gelu) {
    const std::string form = c.s("approximate", "none");
    if (m.has("approximate") && m.s("approximate", "none") != form) return false;
    m.attrs["approximate"] = form;
  }
  Epilogue e{c.op, "", false, c.name};
  if (op_info(c.op).cls == OpClass::Binary) {
    // A matmul of a vector (1-D A or B) has no [M, N] rows for an operand to broadcast over:
    // the lowering refuses it, so x[K] @ W + b stays two nodes.
    if (m.op == OpKind::MatMul && (g.tensor(m.inputs[0]).shape.size() < 2 || g.tensor(m.inputs[1]).shape.size() < 2)) return false;
    if (c.inputs[0] == c.inputs[1]) return false;
    e.operand_first = c.inputs[1] == y;
    e.operand = e.operand_first ? c.inputs[0] : c.inputs[1];
    auto p = producer.find(e.operand);
    if (p != producer.end() && p->second > i) return false;
  }
  m.epilogue.push_back(e);
  absorb(i, ci, y, c.outputs[0]);
  return true;
}

}  // namespace

void fuse_epilogues(Graph& g) {
  Sweep s(g);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    while (!s.dead[i] && s.fuse_one(i)) {
    }
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!s.dead[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

void eliminate_dead_code(Graph& g) {
  std::set<std::string> live(g.outputs.begin(), g.outputs.end());
  std::vector<Node> kept;
  for (auto it = g.nodes.rbegin(); it != g.nodes.rend(); ++it) {
    bool used = std::any_of(it->outputs.begin(), it->outputs.end(), [&](const std::string& o) { return live.count(o) > 0; });
    if (!used) continue;
    for (const auto& in : it->inputs) live.insert(in);
    for (const auto& e : it->epilogue) live.insert(e.operand);
    kept.push_back(*it);
  }
  std::reverse(kept.begin(), kept.end());
  g.nodes = std::move(kept);
  for (const auto& in : g.inputs) live.insert(in);
  // Produced names in one set (a scan of every node per tensor was quadratic; fuzz, an RNN
  // unrolled over 4,096 steps).
  for (const auto& n : g.nodes) live.insert(n.outputs.begin(), n.outputs.end());
  for (auto it = g.tensors.begin(); it != g.tensors.end();) {
    if (!live.count(it->first)) it = g.tensors.erase(it);
    else ++it;
  }
}

void fold_constants(Graph& g, bool values) {
  constexpr int64_t kValuesLimit = 1 << 16;  // elements: shape sub-graphs, indices, scalars
  std::vector<Node> kept;
  for (auto& n : g.nodes) {
    bool all_const = !n.inputs.empty();
    for (const auto& i : n.inputs) all_const &= i.empty() || g.is_const(i);
    if (all_const && n.epilogue.empty() && host_eval_supported(n.op)) {
      int64_t out_elems = 0;
      for (const auto& o : n.outputs)  // saturated past the limit: a sum of huge outputs overflowed
        if (!o.empty()) out_elems = std::min(out_elems + std::min(numel(g.tensor(o).shape), kValuesLimit + 1), kValuesLimit + 1);
      bool inputs_loaded = true;  // a node of shape-only constants gives shape-only outputs
      for (const auto& i : n.inputs) inputs_loaded &= i.empty() || g.tensor(i).data->loaded();
      if (inputs_loaded && (values || out_elems <= kValuesLimit)) {
        host_eval(g, n);
      } else {
        for (const auto& o : n.outputs)
          if (!o.empty()) g.tensor(o).data = ConstData::shape_only(g.tensor(o).type, numel(g.tensor(o).shape));
      }
      continue;
    }
    kept.push_back(std::move(n));
  }
  g.nodes = std::move(kept);
}

}  // namespace trnsim::compiler
