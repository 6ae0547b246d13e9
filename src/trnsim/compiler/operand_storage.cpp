#include "trnsim/compiler/operand_storage.h"

#include <functional>
#include <set>

namespace trnsim::compiler {

namespace {

// A dense (ungrouped) convolution: TensorE reads its input as the moving operand and its
// result tiles are stored like a matmul's (depthwise/grouped ones run on VectorE in fp32).
bool dense_conv(const Node& n) { return n.op == OpKind::ConvGemm && n.i("group", 1) == 1; }

// Inputs of `n` that TensorE reads in the operand dtype: MatMul A and B; attention Q, K, V
// (its mask is added in fp32); a dense convolution's input.
bool tensor_operand(const Node& n, size_t input) {
  if (n.op == OpKind::MatMul) return input == 1 || (input == 0 && n.i("prologue_ln", 0) == 0);  // a prologue normalises A in fp32
  if (n.op == OpKind::FusedAttention) return input < 3;
  if (dense_conv(n)) return input == 0;
  return false;
}

}  // namespace

void store_operands_narrow(Graph& g, ElemType narrow) {
  if (narrow != ElemType::BFloat16 && narrow != ElemType::Float16) return;
  const auto consumers = g.consumers();
  std::set<std::string> fixed(g.inputs.begin(), g.inputs.end());
  fixed.insert(g.outputs.begin(), g.outputs.end());
  for (const Node& n : g.nodes)  // epilogue operands are read in fp32 on the PSUM evacuation
    for (const Epilogue& e : n.epilogue)
      if (!e.operand.empty()) fixed.insert(e.operand);

  // The tensor and the Reshapes of it, if every read of them is a TensorE operand.
  std::function<bool(const std::string&, std::vector<std::string>&)> only_operand =
      [&](const std::string& t, std::vector<std::string>& group) {
        const TensorInfo& ti = g.tensor(t);
        if (ti.type != ElemType::Float || ti.is_const() || fixed.count(t)) return false;
        auto it = consumers.find(t);
        if (it == consumers.end() || it->second.empty()) return false;
        group.push_back(t);
        for (size_t ci : it->second) {
          const Node& c = g.nodes[ci];
          for (size_t i = 0; i < c.inputs.size(); ++i) {
            if (c.inputs[i] != t) continue;
            if (c.op == OpKind::Reshape && i == 0) {
              if (!only_operand(c.outputs[0], group)) return false;
            } else if (!tensor_operand(c, i)) {
              return false;
            }
          }
        }
        return true;
      };
  for (const Node& n : g.nodes) {
    // Producers whose stores convert on the way out (the matmul's and attention's result
    // tiles); library kernels such as LayerNorm keep their input's dtype.
    if (n.op != OpKind::MatMul && n.op != OpKind::FusedAttention && !dense_conv(n)) continue;
    for (const std::string& o : n.outputs) {
      if (o.empty()) continue;
      std::vector<std::string> group;
      if (!only_operand(o, group)) continue;
      for (const std::string& t : group) g.tensor(t).type = narrow;
    }
  }
}

}  // namespace trnsim::compiler
