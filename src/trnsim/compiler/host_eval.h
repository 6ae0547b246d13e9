// The host evaluator: computes a node whose inputs are all constants, in double precision
// with each output rounded to its element type (fp32, fp16, bf16, integers truncate as ONNX
// casts do). Used by shape inference (shape sub-graphs) and constant folding (weight
// transposes, reshapes). Each op's evaluation is its unit's OpRules::eval (compiler/ops/);
// ops without one simply stay in the graph and run on the chip.
#pragma once
#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

bool host_eval_supported(OpKind k);
// Sets the data of n's outputs (their shapes must already be inferred).
void host_eval(Graph& g, const Node& n);

// Rounds a value to what an element type can hold.
double round_to(ElemType t, double v);

// Walks every index of `shape` and hands the flat offsets into inputs of the given strides.
template <typename F>
void for_each_index(const Shape& shape, const std::vector<std::vector<int64_t>>& strides, F f) {
  const int64_t n = numel(shape);
  const size_t r = shape.size();
  std::vector<int64_t> idx(r, 0), off(strides.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    f(i, off);
    for (int d = static_cast<int>(r) - 1; d >= 0; --d) {
      ++idx[d];
      for (size_t k = 0; k < strides.size(); ++k) off[k] += strides[k][d];
      if (idx[d] < shape[d]) break;
      for (size_t k = 0; k < strides.size(); ++k) off[k] -= strides[k][d] * shape[d];
      idx[d] = 0;
    }
  }
}

}  // namespace trnsim::compiler
