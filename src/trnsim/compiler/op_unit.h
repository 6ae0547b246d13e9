// What every op unit in compiler/ops/ includes: the IR, the op parameters, the decomposition
// steps, the helpers below, and the shared rules of the element-wise families.
#pragma once
#include <fmt/format.h>

#include <string>
#include <vector>

#include "trnsim/common/error.h"
#include "trnsim/compiler/decompose_steps.h"
#include "trnsim/compiler/graph_edit.h"
#include "trnsim/compiler/host_eval.h"
#include "trnsim/compiler/ir.h"
#include "trnsim/compiler/op_params.h"
#include "trnsim/compiler/op_table.h"

namespace trnsim::compiler {

inline const TensorInfo& input(const Graph& g, const Node& n, size_t i) { return g.tensor(n.inputs.at(i)); }
inline bool has_input(const Node& n, size_t i) { return i < n.inputs.size() && !n.inputs[i].empty(); }
inline bool has_output(const Node& n, size_t o) { return o < n.outputs.size() && !n.outputs[o].empty(); }
// Sets output o's shape and element type (shape inference).
void set_output(Graph& g, const Node& n, size_t o, Shape s, ElemType t);
// Constant data of a tensor (host evaluation).
inline const ConstData& data(const Graph& g, const std::string& t) { return *g.tensor(t).data; }

// Shared rules of the element-wise families (elementwise_rules.cpp).
void infer_broadcast(Graph& g, const Node& n);   // numpy broadcasting of all inputs, input 0's type
// Inputs first.. must share one element type (ONNX constraint T; Add(float, int64) is invalid).
void require_one_type(const Graph& g, const Node& n, size_t first);
void infer_binary(Graph& g, const Node& n);      // require_one_type from 0, then infer_broadcast
void infer_same(Graph& g, const Node& n);        // input 0's shape and type
void eval_broadcast(Graph& g, const Node& n, std::vector<double>& out);  // rules.binary folded over the inputs
void eval_map(Graph& g, const Node& n, std::vector<double>& out);        // rules.unary per element
int64_t elementwise_units(const Graph& g, const Node& n);                // (row tile, column range) pieces
int64_t tp_elementwise(TpCtx& ctx);                                      // split axis passes through

// The rules every plain element-wise op of a family shares (lowered by lower_elementwise).
OpRules binary_rules(double (*f)(double, double, bool));
OpRules unary_rules(double (*f)(double, const Node&));

// An UnsupportedError naming the op, the reason and the node.
[[noreturn]] void unsupported(const Node& n, const std::string& why);

}  // namespace trnsim::compiler
