#include "trnsim/compiler/fuse_elementwise.h"

#include <algorithm>
#include <map>
#include <set>

#include "trnsim/compiler/lower_elementwise.h"
#include "trnsim/compiler/op_table.h"

namespace trnsim::compiler {

bool chain_op(OpKind k) {
  switch (k) {
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Pow:
    case OpKind::Max: case OpKind::Min: case OpKind::Exp: case OpKind::Log: case OpKind::Tanh:
    case OpKind::Sigmoid: case OpKind::Relu: case OpKind::Gelu: case OpKind::Softplus:
    case OpKind::Sqrt: case OpKind::Reciprocal: case OpKind::Abs: case OpKind::Sign:
    case OpKind::Sin: case OpKind::Cos: case OpKind::Erf: case OpKind::Neg: return true;
    default: return false;
  }
}

namespace {

// Lowered by the generic tile loop of lower_elementwise (not Cast or the rounding ops, whose
// kernels differ), on fp32 data: integer division truncates per op, so integers stay unfused.
bool head_op(const Graph& g, const Node& n) {
  if (op_rules(n.op).lower != &lower_elementwise || n.outputs.size() != 1 || !n.epilogue.empty()) return false;
  switch (n.op) {
    case OpKind::Cast: case OpKind::CastLike: case OpKind::Floor: case OpKind::Ceil: case OpKind::Round: return false;
    default: break;
  }
  for (const auto& i : n.inputs)
    if (i.empty() || g.tensor(i).type != ElemType::Float) return false;
  return g.tensor(n.outputs[0]).type == ElemType::Float;
}

// One node joined to the chain headed by `h` (the producer of `c`'s input y), or false.
bool join(Graph& g, Node& h, const Node& c, const std::string& y, const std::map<std::string, size_t>& producer, size_t hi) {
  // c reads y as a plain input (not as the operand of a chain it heads).
  if (!c.epilogue.empty() || std::find(c.inputs.begin(), c.inputs.end(), y) == c.inputs.end()) return false;
  if (!chain_op(c.op) || c.outputs.size() != 1 || g.tensor(c.outputs[0]).shape != g.tensor(y).shape) return false;
  if (g.tensor(c.outputs[0]).type != ElemType::Float) return false;
  const bool binary = op_info(c.op).cls == OpClass::Binary;
  if (c.inputs.size() != (binary ? 2u : 1u)) return false;
  Epilogue e{c.op, "", false, c.name};
  if (binary) {
    if (c.inputs[0] == c.inputs[1]) return false;  // y op y: the chain holds one running tile
    e.operand_first = c.inputs[1] == y;
    e.operand = e.operand_first ? c.inputs[0] : c.inputs[1];
    if (g.tensor(e.operand).type != ElemType::Float) return false;
    // The operand must exist when the fused node runs (in the head's place).
    auto p = producer.find(e.operand);
    if (p != producer.end() && p->second > hi) return false;
  }
  // GELU's form travels on the head (apply_elementwise reads the node's `approximate`).
  if (c.op == OpKind::Gelu) {
    const std::string form = c.s("approximate", "none");
    if (h.op == OpKind::Gelu || h.has("approximate")) {
      if (h.s("approximate", "none") != form) return false;
    } else {
      h.attrs["approximate"] = form;
    }
  }
  h.epilogue.push_back(e);
  return true;
}

// One node folded into a chain, or false when none is left.
bool fuse_one(Graph& g) {
  const auto cons = g.consumers();
  const std::set<std::string> outputs(g.outputs.begin(), g.outputs.end());
  const std::map<std::string, size_t> producer = g.producers();
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& h = g.nodes[i];
    const bool head = h.epilogue.empty() ? head_op(g, h) : op_rules(h.op).lower == &lower_elementwise;
    if (!head) continue;
    const std::string y = h.outputs[0];
    auto it = cons.find(y);
    if (it == cons.end() || it->second.size() != 1 || outputs.count(y)) continue;
    const size_t ci = it->second[0];
    const Node c = g.nodes[ci];
    if (!join(g, h, c, y, producer, i)) continue;
    g.tensors.erase(y);
    h.outputs[0] = c.outputs[0];
    g.nodes.erase(g.nodes.begin() + static_cast<long>(ci));
    return true;
  }
  return false;
}

}  // namespace

void fuse_elementwise(Graph& g) {
  while (fuse_one(g)) {
  }
}

}  // namespace trnsim::compiler
