// What an op's tensor-parallel rule (OpRules::tp_axis) works with: the node, which of its
// inputs are split on which axis, and where to record the constants to slice per rank and the
// shape constants to shrink (tensor_parallel.h describes the analysis).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

// Constant input `input` of node `node` is sliced along `axis` per rank.
struct TpConstSlice {
  size_t node, input;
  int64_t axis;
};

struct TpCtx {
  const Graph& g;
  size_t ni;  // the node's index
  const Node& n;
  const std::map<std::string, int64_t>& split;  // tensor -> split axis (absent: replicated)
  std::vector<TpConstSlice>& slices;
  std::vector<size_t>& shape_rewrites;  // Reshape/Expand nodes whose target shape shrinks
  bool partial = false;                 // a row-parallel MatMul: the output is a partial sum
  std::string why;                      // set when the rule returns -1

  int64_t sp(const std::string& t) const;  // the split axis of t, -1 if replicated
  int64_t rank(const std::string& t) const { return static_cast<int64_t>(g.tensor(t).shape.size()); }
  const Shape& out_shape() const { return g.tensor(n.outputs[0]).shape; }
  // A replicated operand of a node whose output is split on `out_axis` (numpy broadcasting,
  // aligned right): fine if broadcast along that axis; a constant that spans it is sliced; a
  // computed tensor that spans it cannot be split (sets why, returns false).
  bool replicated_operand_ok(size_t input, int64_t out_axis, int64_t out_rank);
  int64_t refuse(const std::string& reason);  // why = "<op> '<node>': reason"; returns -1
  int64_t no_rule();                          // the op has no rule for this split
};

std::string node_label(const Node& n);  // "MatMul 'name'"

}  // namespace trnsim::compiler
