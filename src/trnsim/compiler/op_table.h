// The graph IR's operators in one table: per op its ONNX name, input arity, the attributes the
// compiler understands and its rules (op_rules.h). The rows are registered by the op units in
// compiler/ops/ (one file per op or op family; docs/adding-an-op.md); the importer rejects
// attributes outside a row's list, so a model never compiles with a meaning we silently ignored.
// The table checks at first use that every enumerator is registered exactly once.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "trnsim/compiler/op_rules.h"

namespace trnsim::compiler {

enum class OpKind : uint8_t {
  // element-wise binary (numpy broadcasting)
  Add, Sub, Mul, Div, Pow, Max, Min, Mod, Equal, Less, Greater, LessOrEqual, GreaterOrEqual,
  And, Or, Sum, Mean,  // Sum/Mean (and Max/Min) take 1..n inputs
  PRelu,
  // element-wise unary
  Neg, Abs, Sqrt, Reciprocal, Exp, Log, Erf, Tanh, Relu, Sigmoid, Gelu, Softplus, Sin, Cos,
  Sign, Not, Floor, Ceil, Round, Identity, Dropout, Elu, Selu, Celu, ThresholdedRelu, Softsign, Shrink, Cast, LeakyRelu, Clip, HardSigmoid, HardSwish, IsNaN, CastLike,
  Where,
  // compute
  MatMul, Gemm, Conv, LayerNormalization, Softmax, LogSoftmax, ReduceMean, ReduceSum,
  ReduceMax, ReduceMin, ReduceL1, ReduceL2, ReduceSumSquare, GlobalAveragePool, MaxPool, AveragePool, BatchNormalization, LRN,
  FusedAttention,  // made by the attention-fusion pass (fuse_attention.h), not an ONNX op
  // shape and data movement
  Reshape, Flatten, Transpose, Concat, Slice, Gather, Expand, Unsqueeze, Squeeze, Shape,
  ConstantOfShape, Constant, Range, Pad, Split, GatherElements, Size, Tile, Resize,
  // the ops of the models users bring (issue 11)
  GatherND, CumSum, Trilu, ArgMax, ArgMin, TopK, OneHot, InstanceNormalization, GroupNormalization, Einsum,
  ScatterND, ScatterElements,
  DepthToSpace, SpaceToDepth,  // ops/depth_space.cpp
  ConvTranspose, LSTM, GRU, RNN, NonZero, If, Loop,  // issue 11 item 2 (ops2)
  Im2col,  // made by Conv's decomposition (ops/conv.cpp), not an ONNX op
  ConvGemm,  // implicit-GEMM convolution made by Conv's decomposition (ops/conv_gemm.cpp)
  PoolWindow,  // windowed max/sum reduction made by the pooling decomposition (ops/pool_window.cpp)
  MatMulMx,  // MX weight x MX activations on TensorE's MX path, made by the quantize pass (ops/matmul_mx.cpp)
  kCount
};

enum class OpClass : uint8_t { Binary, Unary, Compute, Movement, Shape };

struct OpInfo {
  OpKind kind;
  std::string_view name;
  OpClass cls;
  int min_inputs;
  int max_inputs;
  std::vector<std::string_view> attributes;  // the attributes the compiler implements
  // The first version of the op's ONNX schema after opset 23 that changed its meaning for the
  // element types and attributes the importer accepts (onnx 1.23's schema history), 0 if none
  // up to opset 28. Versions that only add element types the importer rejects do not count.
  int revised_after_opset23 = 0;
  bool internal = false;  // made by a pass, never imported (not listed by `trnsim ops`)
  OpRules rules;
};

// The rows the op units add (ops/<unit>.cpp: void register_<unit>(OpRegistry&)).
using OpRegistry = std::vector<OpInfo>;

const OpInfo& op_info(OpKind k);
const OpRules& op_rules(OpKind k);
std::string_view op_name(OpKind k);
std::optional<OpKind> op_from_name(std::string_view onnx_name);
const std::vector<OpInfo>& op_table();  // in enum order

// A model of opset 24..28 loads when none of its ops was revised up to its opset: the
// compiler implements the ops as specified at opset 23.
int revised_after_opset23(OpKind k);

}  // namespace trnsim::compiler
