// Row-wise, numerically stable softmax: y[r, :] = exp(x[r, :] - max_r) / sum(exp(x[r, :] - max_r)).
//
// Rows go onto the 128 partitions. A row short enough to stay in SBUF is loaded once:
// VectorE finds the (negated) row max, ScalarE computes exp(x - max) and its row sum in one
// instruction (activation with accumulate), VectorE takes the reciprocal of the sum and scales.
// A longer row is done in two passes over column chunks: an online max/sum pass (the sum is
// rescaled by exp(m_old - m_new) whenever the max grows), then exp and scale per chunk.
// Tiles rotate (TileRing) so the next row tile loads while this one computes.
#pragma once
#include <cstdint>

#include "trnsim/kernels/kernel_builder.h"
#include "trnsim/kernels/registry.h"

namespace trnsim::kernels {

// x, y: [rows, cols] of the same dtype. `chunk` = 0 picks the widest chunk that fits.
void softmax(KernelBuilder& kb, const Tensor& x, const Tensor& y, int64_t chunk = 0);

// The registry entry ("softmax": --rows --cols [--chunk]).
KernelDef softmax_def();

}  // namespace trnsim::kernels
