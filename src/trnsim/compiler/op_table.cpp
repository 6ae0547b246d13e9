#include "trnsim/compiler/op_table.h"

#include <cstdlib>

namespace trnsim::compiler {
namespace {

using C = OpClass;
using K = OpKind;

const std::vector<OpInfo>& table() {
  static const std::vector<OpInfo> t = {
      {K::Add, "Add", C::Binary, 2, 2, {}},
      {K::Sub, "Sub", C::Binary, 2, 2, {}},
      {K::Mul, "Mul", C::Binary, 2, 2, {}},
      {K::Div, "Div", C::Binary, 2, 2, {}},
      {K::Pow, "Pow", C::Binary, 2, 2, {}},
      {K::Max, "Max", C::Binary, 1, 64, {}},
      {K::Min, "Min", C::Binary, 1, 64, {}},
      {K::Mod, "Mod", C::Binary, 2, 2, {"fmod"}},
      {K::Equal, "Equal", C::Binary, 2, 2, {}},
      {K::Less, "Less", C::Binary, 2, 2, {}},
      {K::Greater, "Greater", C::Binary, 2, 2, {}},
      {K::LessOrEqual, "LessOrEqual", C::Binary, 2, 2, {}},
      {K::GreaterOrEqual, "GreaterOrEqual", C::Binary, 2, 2, {}},
      {K::And, "And", C::Binary, 2, 2, {}},
      {K::Or, "Or", C::Binary, 2, 2, {}},
      {K::Sum, "Sum", C::Binary, 1, 64, {}},
      {K::Mean, "Mean", C::Binary, 1, 64, {}},
      {K::PRelu, "PRelu", C::Binary, 2, 2, {}},
      {K::Neg, "Neg", C::Unary, 1, 1, {}},
      {K::Abs, "Abs", C::Unary, 1, 1, {}},
      {K::Sqrt, "Sqrt", C::Unary, 1, 1, {}},
      {K::Reciprocal, "Reciprocal", C::Unary, 1, 1, {}},
      {K::Exp, "Exp", C::Unary, 1, 1, {}},
      {K::Log, "Log", C::Unary, 1, 1, {}},
      {K::Erf, "Erf", C::Unary, 1, 1, {}},
      {K::Tanh, "Tanh", C::Unary, 1, 1, {}},
      {K::Relu, "Relu", C::Unary, 1, 1, {}},
      {K::Sigmoid, "Sigmoid", C::Unary, 1, 1, {}},
      {K::Gelu, "Gelu", C::Unary, 1, 1, {"approximate"}},
      {K::Softplus, "Softplus", C::Unary, 1, 1, {}},
      {K::Sin, "Sin", C::Unary, 1, 1, {}},
      {K::Cos, "Cos", C::Unary, 1, 1, {}},
      {K::Sign, "Sign", C::Unary, 1, 1, {}},
      {K::Not, "Not", C::Unary, 1, 1, {}},
      {K::Floor, "Floor", C::Unary, 1, 1, {}},
      {K::Ceil, "Ceil", C::Unary, 1, 1, {}},
      {K::Round, "Round", C::Unary, 1, 1, {}},
      {K::Identity, "Identity", C::Unary, 1, 1, {}},
      // Inference only: the output is the input, the optional mask all true (opset 7-11: ratio
      // attribute; 12+: ratio and training_mode inputs, seed attribute).
      {K::Dropout, "Dropout", C::Unary, 1, 3, {"ratio", "seed"}},
      {K::Elu, "Elu", C::Unary, 1, 1, {"alpha"}},
      {K::Selu, "Selu", C::Unary, 1, 1, {"alpha", "gamma"}},
      {K::Celu, "Celu", C::Unary, 1, 1, {"alpha"}},
      {K::ThresholdedRelu, "ThresholdedRelu", C::Unary, 1, 1, {"alpha"}},
      {K::Softsign, "Softsign", C::Unary, 1, 1, {}},
      {K::Shrink, "Shrink", C::Unary, 1, 1, {"bias", "lambd"}},
      {K::Cast, "Cast", C::Unary, 1, 1, {"to", "saturate"}},
      {K::LeakyRelu, "LeakyRelu", C::Unary, 1, 1, {"alpha"}},
      {K::Clip, "Clip", C::Unary, 1, 3, {"min", "max"}},
      {K::HardSigmoid, "HardSigmoid", C::Unary, 1, 1, {"alpha", "beta"}},
      {K::HardSwish, "HardSwish", C::Unary, 1, 1, {}},
      {K::IsNaN, "IsNaN", C::Unary, 1, 1, {}},
      {K::CastLike, "CastLike", C::Unary, 2, 2, {"saturate"}},
      {K::Where, "Where", C::Binary, 3, 3, {}},
      {K::MatMul, "MatMul", C::Compute, 2, 2, {}},
      {K::Gemm, "Gemm", C::Compute, 2, 3, {"alpha", "beta", "transA", "transB"}},
      {K::Conv, "Conv", C::Compute, 2, 3, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}},
      {K::LayerNormalization, "LayerNormalization", C::Compute, 2, 3, {"axis", "epsilon", "stash_type"}},
      {K::Softmax, "Softmax", C::Compute, 1, 1, {"axis"}},
      {K::LogSoftmax, "LogSoftmax", C::Compute, 1, 1, {"axis"}},
      {K::ReduceMean, "ReduceMean", C::Compute, 1, 2, {"axes", "keepdims", "noop_with_empty_axes"}},
      {K::ReduceSum, "ReduceSum", C::Compute, 1, 2, {"axes", "keepdims", "noop_with_empty_axes"}},
      {K::ReduceMax, "ReduceMax", C::Compute, 1, 2, {"axes", "keepdims", "noop_with_empty_axes"}},
      {K::ReduceMin, "ReduceMin", C::Compute, 1, 2, {"axes", "keepdims", "noop_with_empty_axes"}},
      {K::GlobalAveragePool, "GlobalAveragePool", C::Compute, 1, 1, {}},
      {K::MaxPool, "MaxPool", C::Compute, 1, 1, {"kernel_shape", "pads", "strides", "auto_pad", "ceil_mode", "dilations", "storage_order"}},
      {K::AveragePool, "AveragePool", C::Compute, 1, 1, {"kernel_shape", "pads", "strides", "auto_pad", "ceil_mode", "count_include_pad", "dilations"}},
      {K::BatchNormalization, "BatchNormalization", C::Compute, 5, 5, {"epsilon", "momentum", "training_mode"}},
      {K::LRN, "LRN", C::Compute, 1, 1, {"alpha", "beta", "bias", "size"}},
      {K::FusedAttention, "FusedAttention", C::Compute, 3, 4, {"batch", "dims", "q_strides", "k_strides", "v_strides", "out_strides", "mask_strides", "scale", "fused"}},
      {K::Reshape, "Reshape", C::Movement, 2, 2, {"allowzero"}},
      {K::Flatten, "Flatten", C::Movement, 1, 1, {"axis"}},
      {K::Transpose, "Transpose", C::Movement, 1, 1, {"perm"}},
      {K::Concat, "Concat", C::Movement, 1, 4096, {"axis"}},
      {K::Slice, "Slice", C::Movement, 1, 5, {"starts", "ends", "axes"}},
      {K::Gather, "Gather", C::Movement, 2, 2, {"axis"}},
      {K::Expand, "Expand", C::Movement, 2, 2, {}},
      {K::Unsqueeze, "Unsqueeze", C::Movement, 1, 2, {"axes"}},
      {K::Squeeze, "Squeeze", C::Movement, 1, 2, {"axes"}},
      {K::Shape, "Shape", C::Shape, 1, 1, {"start", "end"}},
      {K::ConstantOfShape, "ConstantOfShape", C::Shape, 1, 1, {"value"}},
      {K::Constant, "Constant", C::Shape, 0, 0, {"value", "value_float", "value_floats", "value_int", "value_ints"}},
      {K::Range, "Range", C::Shape, 3, 3, {}},
      {K::Pad, "Pad", C::Movement, 1, 4, {"mode", "pads", "value"}},
      {K::Split, "Split", C::Movement, 1, 2, {"axis", "split", "num_outputs"}},
      {K::GatherElements, "GatherElements", C::Movement, 2, 2, {"axis"}},
      {K::Size, "Size", C::Shape, 1, 1, {}},
      {K::Tile, "Tile", C::Movement, 2, 2, {}},
      {K::Resize, "Resize", C::Movement, 2, 4, {"mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a",
                                               "exclude_outside", "extrapolation_value", "antialias", "axes",
                                               "keep_aspect_ratio_policy"}},
  };
  return t;
}

}  // namespace

// Every enumerator has its row, in enum order (checked once at start-up by op_info's index).
static_assert(static_cast<int>(OpKind::kCount) == 88, "op table: add the new op's row and update this count");

const std::vector<OpInfo>& op_table() { return table(); }

const OpInfo& op_info(OpKind k) {
  const auto& t = table();
  static const bool ordered = [&] {
    if (t.size() != static_cast<size_t>(OpKind::kCount)) return false;
    for (size_t i = 0; i < t.size(); ++i)
      if (static_cast<size_t>(t[i].kind) != i) return false;
    return true;
  }();
  if (!ordered) std::abort();  // a programming error in the table above, caught by every test
  return t[static_cast<size_t>(k)];
}

std::string_view op_name(OpKind k) { return op_info(k).name; }

// Checked against onnx 1.23's schema history: the versions 24/25/28 of Identity, Cast,
// CastLike, Reshape, Flatten, Transpose, (Un)Squeeze, Shape, Size, Constant(OfShape) and Pad
// only add element types (float8e8m0, int2/uint2, float6) that the importer rejects, plus
// Cast's round_mode attribute, rejected by the attribute list; so they do not count. Range-27
// (stash_type, new doc) and Mod-28 (new doc) changed meaning.
int revised_after_opset23(OpKind k) {
  switch (k) {
    case K::Mod: return 28;
    case K::Range: return 27;
    default: return 0;
  }
}

std::optional<OpKind> op_from_name(std::string_view n) {
  for (const auto& r : table())
    if (r.name == n) return r.kind;
  return std::nullopt;
}

}  // namespace trnsim::compiler
