// The host evaluator: computes a node whose inputs are all constants, in double precision
// with each output rounded to its element type (fp32, fp16, bf16, integers truncate as ONNX
// casts do). Used by shape inference (shape sub-graphs) and constant folding (weight
// transposes, reshapes); ops it lacks simply stay in the graph and run on the chip.
#pragma once
#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

bool host_eval_supported(OpKind k);
// Sets the data of n's outputs (their shapes must already be inferred).
void host_eval(Graph& g, const Node& n);

// The scalar function of an element-wise op, shared with the lowering's reference checks.
double eval_unary(OpKind k, double x, const Node& n);
double eval_binary(OpKind k, double a, double b, bool integral);

// Rounds a value to what an element type can hold.
double round_to(ElemType t, double v);

}  // namespace trnsim::compiler
