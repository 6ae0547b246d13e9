// Matrix transpose out[C, R] = in[R, C]^T, two ways:
//  - tensor: through the PE array. Row tiles of in ([128, 512]) are loaded with wide, efficient
//    DMAs; TensorE transposes 128x128 blocks into PSUM, four side by side so that one PSUM bank
//    holds 512 contiguous columns of an output row; VectorE and ScalarE take turns copying
//    PSUM to SBUF; the stores write 512-column runs of out.
//  - dma: HBM to HBM with a transposing access pattern. Every element is its own run, so each
//    transfer runs at a few percent of DMA peak; it wins only for tiny matrices, where the
//    tensor path's fixed costs (load, transpose, copy, store, each synchronised) dominate.
//  - auto: for up to 64K elements, the faster of the two in the timing model; tensor above.
#pragma once
#include <string>

#include "trnsim/kernels/kernel_builder.h"
#include "trnsim/kernels/registry.h"

namespace trnsim::kernels {

void transpose_tensor(KernelBuilder& kb, const Tensor& in, const Tensor& out);
void transpose_dma(KernelBuilder& kb, const Tensor& in, const Tensor& out);

// A complete program; method "tensor", "dma" or "auto".
isa::Program transpose_program(const hw::ChipSpec& chip, int64_t rows, int64_t cols, DType t,
                               const std::string& method);

KernelDef transpose_def();

}  // namespace trnsim::kernels
