// Cast and CastLike: element type conversion (the values rounded to what the target type
// holds; narrow floats saturate unless saturate = 0). Not split across cores: the conversion
// kernel uses tile rings of its own.
#include "trnsim/compiler/op_unit.h"
#include "trnsim/numerics/convert.h"

namespace trnsim::compiler {
namespace {

using K = OpKind;

ElemType cast_target(const Node& n) {
  switch (n.i("to", 1)) {
    case 1: return ElemType::Float;
    case 10: return ElemType::Float16;
    case 16: return ElemType::BFloat16;
    case 11: return ElemType::Double;
    case 7: return ElemType::Int64;
    case 6: return ElemType::Int32;
    case 3: return ElemType::Int8;
    case 5: return ElemType::Int16;
    case 4: return ElemType::UInt16;
    case 12: return ElemType::UInt32;
    case 13: return ElemType::UInt64;
    case 2: return ElemType::UInt8;
    case 9: return ElemType::Bool;
    case 17: return ElemType::Float8E4M3FN;
    case 19: return ElemType::Float8E5M2;
    case 23: return ElemType::Float4E2M1;
    case 21: return ElemType::UInt4;
    case 22: return ElemType::Int4;
    case 25: return ElemType::UInt2;
    case 26: return ElemType::Int2;
    default: break;
  }
  throw UnsupportedError(fmt::format("unsupported: op Cast (attribute to={}) at node '{}'", n.i("to", 1), n.name));
}

void eval_cast(Graph& g, const Node& n, std::vector<double>& r) {
  r = data(g, n.inputs[0]).values();
  const ElemType t = g.tensor(n.outputs[0]).type;
  if (is_narrow_float(t) && n.i("saturate", 1) == 0) {
    const auto dt = narrow_dtype(t);  // saturate=0: the format's own overflow rule
    for (auto& v : r) v = numerics::decode(numerics::encode(static_cast<float>(v), dt), dt);
  } else {
    for (auto& v : r) v = round_to(t, v);
  }
}

OpInfo row(OpKind k, std::string_view name, int inputs, std::vector<std::string_view> attrs, void (*infer)(Graph&, const Node&)) {
  OpInfo i{.kind = k, .name = name, .cls = OpClass::Unary, .min_inputs = inputs, .max_inputs = inputs, .attributes = std::move(attrs),
           .rules = unary_rules([](double x, const Node&) { return x; })};
  i.rules.infer = infer;
  i.rules.eval = eval_cast;
  i.rules.eval_rounds = true;
  i.rules.parallel_units = nullptr;
  return i;
}

}  // namespace

void register_cast(OpRegistry& r) {
  r.push_back(row(K::Cast, "Cast", 1, {"to", "saturate"},
                  [](Graph& g, const Node& n) { set_output(g, n, 0, input(g, n, 0).shape, cast_target(n)); }));
  r.push_back(row(K::CastLike, "CastLike", 2, {"saturate"},
                  [](Graph& g, const Node& n) { set_output(g, n, 0, input(g, n, 0).shape, input(g, n, 1).type); }));
}

}  // namespace trnsim::compiler
