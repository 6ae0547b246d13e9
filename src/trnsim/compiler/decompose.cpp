#include "trnsim/compiler/decompose.h"

#include "trnsim/compiler/graph_edit.h"

namespace trnsim::compiler {

void decompose(Graph& g) {
  GraphEditor e(g);
  std::vector<Node> old = std::move(g.nodes);
  g.nodes.clear();
  for (auto& n : old) {
    const auto rule = op_rules(n.op).decompose;
    if (!rule || !rule(e, n)) e.nodes().push_back(n);
  }
  g.nodes = std::move(e.nodes());
}

}  // namespace trnsim::compiler
