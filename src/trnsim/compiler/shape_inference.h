// Shape inference: every tensor gets a concrete shape and element type. Symbolic input axes are
// bound first (bind_inputs). Constant sub-graphs that compute shapes (Shape -> Gather -> Concat
// -> Reshape, as PyTorch's exporter writes them) are evaluated on the host as they are met, so
// that the ops they feed get concrete shapes.
#pragma once
#include <map>
#include <string>

#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

// Sets the concrete shape of each graph input: `shapes` (by input name) wins, then
// `dims` (by "input[axis]", then by symbolic axis name), then `batch` for a symbolic first
// axis; any other symbolic
// axis is 1. Throws ShapeError when a given shape disagrees with a fixed axis. Returns the
// axes other than the first that were set to 1 that way ("x[2] 'height'"), for error hints.
std::vector<std::string> bind_inputs(Graph& g, const std::map<std::string, Shape>& shapes,
                                     const std::map<std::string, int64_t>& dims, int64_t batch);

// Infers the outputs of one node from its inputs (shapes must be known): the op unit's
// shape rule (OpRules::infer).
void infer_node(Graph& g, const Node& n);

// The pass: infers every node in order, folding small constant sub-graphs.
void infer_shapes(Graph& g);

}  // namespace trnsim::compiler
