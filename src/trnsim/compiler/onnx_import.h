// ONNX -> graph IR, in C++ (the ONNX project's protobuf classes), so `trnsim run model.onnx`
// needs no Python. Default-domain opsets 7..23 load; an op, attribute or domain the compiler
// does not implement is an UnsupportedError "unsupported: op X (attribute Y) at node 'n'"; a
// file that is not a ModelProto is an Error naming the file.
#pragma once
#include <string>
#include <vector>

#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

inline constexpr int kMinOpset = 7;
inline constexpr int kMaxOpset = 23;
// Opsets 24..kMaxKnownOpset load when none of the model's ops was revised after opset 23.
inline constexpr int kMaxKnownOpset = 28;

Graph import_onnx_file(const std::string& path);
// `source` names the model in error messages.
Graph import_onnx_bytes(const std::string& bytes, const std::string& source = "<bytes>");

// An If branch or a Loop body (the GraphProto the importer keeps serialized in the node's
// attribute) added to g: its initializers and Constant nodes become constants, its formal
// inputs read the tensors `bind` names (in order), names of enclosing graphs stay as they are,
// and every name it defines gets `prefix`. Returns its nodes (in order, not yet
// shape-inferred) and the tensors its outputs are (ops/control_flow.cpp).
struct Subgraph {
  std::vector<Node> nodes;
  std::vector<std::string> outputs;
};
Subgraph inline_subgraph(Graph& g, const std::string& graph_proto, const std::string& prefix, const std::vector<std::string>& bind);

}  // namespace trnsim::compiler
