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

void fuse_epilogues(Graph& g) {
  bool changed = true;
  while (changed) {
    changed = false;
    auto cons = g.consumers();
    std::set<std::string> outputs(g.outputs.begin(), g.outputs.end());
    // Position of each tensor's producer, so an operand is only fused if it exists before the
    // MatMul runs.
    std::map<std::string, size_t> producer;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      for (const auto& o : g.nodes[i].outputs) producer[o] = i;
    for (size_t i = 0; i < g.nodes.size() && !changed; ++i) {
      Node& m = g.nodes[i];
      if (m.op != OpKind::MatMul && (m.op != OpKind::ConvGemm || m.i("group", 1) > 1)) continue;
      const std::string y = m.outputs[0];
      auto it = cons.find(y);
      if (it == cons.end() || it->second.size() != 1 || outputs.count(y)) continue;
      Node& c = g.nodes[it->second[0]];
      if (!epilogue_op(c.op) || g.tensor(c.outputs[0]).shape != g.tensor(y).shape) continue;
      // GELU's form travels on the MatMul (apply_elementwise reads the node's `approximate`).
      if (c.op == OpKind::Gelu) {
        const std::string form = c.s("approximate", "none");
        if (m.has("approximate") && m.s("approximate", "none") != form) continue;
        m.attrs["approximate"] = form;
      }
      Epilogue e{c.op, "", false, c.name};
      if (op_info(c.op).cls == OpClass::Binary) {
        if (c.inputs[0] == c.inputs[1]) continue;
        e.operand_first = c.inputs[1] == y;
        e.operand = e.operand_first ? c.inputs[0] : c.inputs[1];
        auto p = producer.find(e.operand);
        if (p != producer.end() && p->second > i) continue;
      }
      m.epilogue.push_back(e);
      std::string out = c.outputs[0];
      g.tensors.erase(y);
      m.outputs[0] = out;
      g.nodes.erase(g.nodes.begin() + static_cast<long>(it->second[0]));
      changed = true;
    }
  }
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
  for (auto it = g.tensors.begin(); it != g.tensors.end();) {
    bool produced = false;
    for (const auto& n : g.nodes) produced |= std::find(n.outputs.begin(), n.outputs.end(), it->first) != n.outputs.end();
    if (!live.count(it->first) && !produced) it = g.tensors.erase(it);
    else ++it;
  }
}

void fold_constants(Graph& g) {
  std::vector<Node> kept;
  for (auto& n : g.nodes) {
    bool all_const = !n.inputs.empty();
    for (const auto& i : n.inputs) all_const &= i.empty() || g.is_const(i);
    if (all_const && n.epilogue.empty() && host_eval_supported(n.op)) {
      host_eval(g, n);
      continue;
    }
    kept.push_back(std::move(n));
  }
  g.nodes = std::move(kept);
}

}  // namespace trnsim::compiler
