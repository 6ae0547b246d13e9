// Helpers for passes that rewrite nodes into other nodes: add a constant, add a node whose
// outputs get fresh names. Shapes of new tensors are filled in by re-running infer_node.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

class GraphEditor {
 public:
  explicit GraphEditor(Graph& g) : g_(g) {}
  std::string constant(const std::string& base, Shape shape, std::vector<double> values,
                       ElemType t = ElemType::Float);
  std::string ints(const std::string& base, const std::vector<int64_t>& v);  // 1-D int64 constant
  // Appends a node; `out` = "" gives a fresh output name. Returns the output name. A name this
  // editor has used already gets "#k" appended (the k-th repeat), so a decomposition's nine
  // window Slices stay apart in the per-op report and the trace.
  std::string add(OpKind op, const std::string& name, std::vector<std::string> inputs,
                  std::map<std::string, AttrValue> attrs = {}, std::string out = "");
  std::vector<Node>& nodes() { return out_; }
  Graph& graph() { return g_; }

 private:
  Graph& g_;
  std::vector<Node> out_;
  std::map<std::string, int> repeats_;  // node names used by this editor, and how often
};

}  // namespace trnsim::compiler
