// RMS normalisation over each row: y = x / sqrt(mean(x^2) + eps) * gamma (as in Llama).
//
// ScalarE squares each chunk and sums it in the same instruction (activation Square with
// accumulate), then computes 1/sqrt(sum / cols + eps) with the scale and bias of one more
// activation; ScalarE scales x by it and VectorE multiplies by gamma ([cols], broadcast to the
// partitions by DMA). Long rows go in column chunks (two passes over x).
#pragma once
#include <cstdint>

#include "trnsim/kernels/kernel_builder.h"
#include "trnsim/kernels/registry.h"

namespace trnsim::kernels {

inline constexpr float kRmsNormEps = 1e-6f;  // Llama's default

void rmsnorm(KernelBuilder& kb, const Tensor& x, const Tensor& gamma, const Tensor& y,
             float eps = kRmsNormEps, int64_t chunk = 0);

KernelDef rmsnorm_def();

}  // namespace trnsim::kernels
