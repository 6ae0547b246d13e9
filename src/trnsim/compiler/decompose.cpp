#include "trnsim/compiler/decompose.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/compiler/graph_edit.h"

namespace trnsim::compiler {
namespace {

// Replaces n by its decomposition. A node a decomposition emits is decomposed in turn when its
// op has no kernel (ConvTranspose -> Conv -> Im2col + MatMul): it could not be lowered as is,
// so this never changes a node that was lowered before.
void decompose_node(GraphEditor& e, const Node& n, int depth) {
  const auto rule = op_rules(n.op).decompose;
  const size_t before = e.nodes().size();
  if (!rule || !rule(e, n)) {
    e.nodes().push_back(n);
    return;
  }
  if (depth > 16) throw Error(fmt::format("decomposition of node '{}' does not terminate", n.name));
  std::vector<Node> added(e.nodes().begin() + static_cast<std::ptrdiff_t>(before), e.nodes().end());
  e.nodes().resize(before);
  for (const auto& a : added) {
    if (op_rules(a.op).lower || op_rules(a.op).lower_alias) e.nodes().push_back(a);
    else decompose_node(e, a, depth + 1);
  }
}

}  // namespace

void decompose(Graph& g) {
  GraphEditor e(g);
  std::vector<Node> old = std::move(g.nodes);
  g.nodes.clear();
  for (auto& n : old) decompose_node(e, n, 0);
  g.nodes = std::move(e.nodes());
}

}  // namespace trnsim::compiler
