// Operand storage: under a 16-bit TensorE policy (--dtype bf16, Neuron's --auto-cast matmult)
// an fp32 activation that is read only as a TensorE operand (MatMul A or B, attention Q/K/V,
// through Reshapes) is held in HBM at the operand width. Its readers round it to that width on
// the way into SBUF anyway, so the values they see are unchanged; what changes is that it
// moves half the bytes, as the Neuron compiler casts at the producer instead of the consumer.
#pragma once
#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

// Retypes such tensors to `narrow` (BFloat16 or Float16); no-op for any other type.
void store_operands_narrow(Graph& g, ElemType narrow);

}  // namespace trnsim::compiler
