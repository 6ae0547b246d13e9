// The graph IR: named tensors (shape, element type, optional constant data) and nodes (an op
// of op_table.h, its inputs and outputs by tensor name, attributes). Every pass takes a Graph
// and returns it changed; check() is run between passes so that a pass that breaks an
// invariant is named at once instead of showing up as wrong numbers later.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "trnsim/compiler/const_data.h"
#include "trnsim/compiler/elem_type.h"
#include "trnsim/compiler/op_table.h"

namespace trnsim::compiler {

using Shape = std::vector<int64_t>;
int64_t numel(const Shape& s);
std::string shape_str(const Shape& s);

struct TensorInfo {
  std::string name;
  ElemType type = ElemType::Float;
  Shape shape;                         // empty: a scalar; valid after shape inference
  bool shape_known = false;
  std::vector<std::string> dim_params; // graph inputs: symbolic names per axis ("" if fixed)
  // Constants: row-major values in their own element type (const_data.h); copies share them.
  std::optional<ConstData> data;
  bool is_const() const { return data.has_value(); }
};

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>,
                               std::vector<double>, TensorInfo>;

// A post-op applied to a node's output tile before it is stored (fusion of element-wise
// epilogues): out = op(out, operand) or out = op(out) for unary ops.
struct Epilogue {
  OpKind op;
  std::string operand;      // binary ops: the other input's tensor name
  bool operand_first = false;  // op(operand, out) instead of op(out, operand)
  std::string fused_node;   // the node that was fused in (for the per-op report)
};

struct Node {
  OpKind op;
  std::string name;
  std::vector<std::string> inputs;   // "" for an omitted optional input
  std::vector<std::string> outputs;
  std::map<std::string, AttrValue> attrs;
  std::vector<Epilogue> epilogue;

  bool has(const std::string& a) const { return attrs.count(a) > 0; }
  int64_t i(const std::string& a, int64_t def) const;
  double f(const std::string& a, double def) const;
  std::string s(const std::string& a, const std::string& def) const;
  std::vector<int64_t> ints(const std::string& a, std::vector<int64_t> def = {}) const;
};

struct Graph {
  std::string name;
  std::map<std::string, TensorInfo> tensors;
  std::vector<Node> nodes;              // topological order
  std::vector<std::string> inputs;      // runtime inputs (not constants)
  std::vector<std::string> outputs;
  int opset = 0;

  TensorInfo& tensor(const std::string& n);
  const TensorInfo& tensor(const std::string& n) const;
  bool is_const(const std::string& n) const;
  // A fresh tensor name derived from `base` (for tensors that passes introduce).
  std::string fresh(const std::string& base);
  // Consumers of each tensor (node indices), for the fusion and dead-code passes.
  std::map<std::string, std::vector<size_t>> consumers() const;
  // The node writing each tensor (node index), for the same passes.
  std::map<std::string, size_t> producers() const;
  // Removes the nodes marked in `gone` (indexed as nodes are), keeping the others' order: the
  // one compaction of a pass that rewrites in place while its indices must stay valid.
  void erase_nodes(const std::vector<bool>& gone);
  int counter = 0;
};

// Invariants: every node input is a graph input, a constant or an earlier node's output;
// every tensor has one producer; shapes known once `shapes_required`; ops' arity as in the
// table. Throws Error naming the pass after which it failed.
void check(const Graph& g, const std::string& after_pass, bool shapes_required);

// Human-readable listing, one line per node: "%y: f32[1,128] = MatMul(%x, %w) {...}".
std::string dump(const Graph& g);

}  // namespace trnsim::compiler
