// Layer normalisation over each row: y = (x - mean) / sqrt(var + eps) * gamma + beta, with
// mean and (biased) variance over the row's cols, as torch.nn.functional.layer_norm.
//
// Statistics come from VectorE's bn_stats (one per 512 columns, the NKI BN_STATS_FMAX) and one
// bn_aggr per row tile; ScalarE turns var into 1/sqrt(var + eps) and applies
// x * rstd - mean * rstd in one activation; VectorE multiplies by gamma and adds beta.
// gamma and beta ([cols]) are broadcast to the partitions by DMA (partition stride 0).
// Rows that do not fit in SBUF are processed in column chunks (two passes over x).
#pragma once
#include <cstdint>

#include "trnsim/kernels/kernel_builder.h"
#include "trnsim/kernels/registry.h"

namespace trnsim::kernels {

inline constexpr float kLayerNormEps = 1e-5f;  // torch's default

// x, y: [rows, cols]; gamma, beta: [cols]. `chunk` = 0 picks the widest that fits.
void layernorm(KernelBuilder& kb, const Tensor& x, const Tensor& gamma, const Tensor& beta,
               const Tensor& y, float eps = kLayerNormEps, int64_t chunk = 0);

KernelDef layernorm_def();

}  // namespace trnsim::kernels
