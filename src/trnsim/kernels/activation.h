// Element-wise activation y = f(x) for any ScalarE function (isa::ActFunc: exp, gelu, silu,
// tanh, rsqrt, ...). Rows on the partitions, columns in chunks; loads, ScalarE and stores
// overlap through rotating tiles (three deep: one loading, one computing, one storing).
#pragma once
#include "trnsim/kernels/kernel_builder.h"
#include "trnsim/kernels/registry.h"

namespace trnsim::kernels {

// x, y: [rows, cols], same dtype. `chunk` = 0 picks the widest that fits.
void activation(KernelBuilder& kb, const Tensor& x, const Tensor& y, ActFunc f, int64_t chunk = 0);

// The function in double precision, the reference for ActFunc f.
double act_reference(ActFunc f, double x);

KernelDef activation_def();

}  // namespace trnsim::kernels
