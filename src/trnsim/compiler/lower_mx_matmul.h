// MatMulMX, a MatMul by an MX-quantised weight with MX activations (made by the quantize pass;
// inputs: A [..., K], the weight's element codes [K, N], its E8M0 scales [K/32, N]) on TensorE's MX path (isa::MatmulMx, Trainium3). As the bf16 kernel, A^T is the
// stationary operand and the weight the moving one, so PSUM holds the result [rows, columns]:
// rows of A are loaded, transposed on TensorE 128 x 128 and quantised to MX out of PSUM by
// QuantizeMX on VectorE (blocks of 32 along K, the partition axis); the weight's codes and
// scales stream from HBM at their own width (one DMA per block of columns, resident while the
// row tiles pass), with no dequantised copy. Epilogue ops (bias,
// activation) are applied on the PSUM evacuation; a fused LayerNorm is not (fusion.cpp).
#pragma once
#include "trnsim/compiler/lower_context.h"

namespace trnsim::compiler {

void lower_mx_matmul(LowerCtx& ctx);

}  // namespace trnsim::compiler
