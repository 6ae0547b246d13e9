#include "trnsim/compiler/host_eval.h"

#include <cmath>

#include "trnsim/numerics/convert.h"

namespace trnsim::compiler {

double round_to(ElemType t, double v) {
  switch (t) {
    case ElemType::Float: return static_cast<float>(v);
    case ElemType::Float16: return numerics::decode(numerics::encode(static_cast<float>(v), numerics::DType::F16), numerics::DType::F16);
    case ElemType::BFloat16: return numerics::decode(numerics::encode(static_cast<float>(v), numerics::DType::BF16), numerics::DType::BF16);
    case ElemType::Double: return v;
    case ElemType::Bool: return v != 0 ? 1 : 0;
    case ElemType::Float8E4M3FN:
    case ElemType::Float8E5M2:
    case ElemType::Float4E2M1:
    case ElemType::Float8E8M0: {  // ONNX Cast's default saturate=1 (saturate=0: the Cast unit)
      numerics::ConvertOptions o;
      o.overflow = numerics::Overflow::Saturate;
      const auto dt = narrow_dtype(t);
      return numerics::decode(numerics::encode(static_cast<float>(v), dt, o), dt);
    }
    case ElemType::Int4: case ElemType::UInt4: case ElemType::Int2: case ElemType::UInt2:
      return std::isfinite(v) ? wrap_sub_byte_int(t, std::trunc(v)) : 0;
    default: return std::isfinite(v) ? std::trunc(v) : 0;
  }
}

bool host_eval_supported(OpKind k) { return op_rules(k).eval != nullptr; }

void host_eval(Graph& g, const Node& n) {
  const OpRules& rules = op_rules(n.op);
  auto& out = g.tensor(n.outputs.at(0));
  std::vector<double> r(static_cast<size_t>(numel(out.shape)));
  rules.eval(g, n, r);
  if (!rules.eval_rounds)
    for (auto& v : r) v = round_to(out.type, v);
  out.data = ConstData::packed(out.type, std::move(r));
}

}  // namespace trnsim::compiler
