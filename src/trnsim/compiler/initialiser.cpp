#include "trnsim/compiler/initialiser.h"

#include <set>

#include "trnsim/common/checked.h"
#include "trnsim/common/error.h"

namespace trnsim::compiler {

std::vector<double> const_values(const Graph& g, const std::string& name) {
  const TensorInfo& t = g.tensor(name);
  if (!t.data) throw Error("compiler: tensor '" + name + "' is not a constant");
  return t.data->values();
}

void set_const_values(Graph& g, const std::string& name, std::vector<double> values, ElemType t) {
  TensorInfo& ti = g.tensor(name);
  if (static_cast<int64_t>(values.size()) != numel(ti.shape)) throw Error("compiler: new values for '" + name + "' do not fit its shape");
  ti.data = ConstData::packed(t, std::move(values), 0);  // large code arrays at their own width
  ti.type = t;
}

int storage_bits(ElemType t) {
  switch (t) {
    case ElemType::Float4E2M1: return 4;
    case ElemType::Int8:
    case ElemType::UInt8:
    case ElemType::Float8E4M3FN:
    case ElemType::Float8E5M2:
    case ElemType::Float8E8M0: return 8;
    case ElemType::Float16:
    case ElemType::BFloat16: return 16;
    default: return 32;
  }
}

int64_t constant_bytes(const Graph& g) {
  std::set<std::string> used;
  for (const auto& n : g.nodes) {
    for (const auto& i : n.inputs)
      if (!i.empty() && g.is_const(i)) used.insert(i);
    for (const auto& e : n.epilogue)
      if (!e.operand.empty() && g.is_const(e.operand)) used.insert(e.operand);
  }
  for (const auto& o : g.outputs)
    if (g.is_const(o)) used.insert(o);
  int64_t bits = 0;
  for (const auto& n : used) {
    const TensorInfo& t = g.tensor(n);
    bits = checked_add(bits, checked_mul(numel(t.shape), storage_bits(t.type), "constant bits"), "constant bits");
  }
  return (bits + 7) / 8;
}

}  // namespace trnsim::compiler
