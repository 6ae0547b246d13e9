// Views with explicit free dims over an SBUF tile or a flat HBM tensor, for kernels whose
// operands are not [rows, cols] tiles: the windows of a conv or pooling band, whose strides
// carry the stride and dilation (lower_conv.cpp, lower_depthwise.cpp, ops/pool_window.cpp).
#pragma once
#include <utility>
#include <vector>

#include "trnsim/kernels/kernel_builder.h"

namespace trnsim::compiler {

// (stride, count) per free dim, outermost first, in elements; at most isa::kMaxFreeDims.
using FreeDims = std::vector<std::pair<int64_t, int64_t>>;

// `parts` partitions of `tile` (from its first) at element `offset` of each partition.
kernels::View sbuf_pattern(const kernels::View& tile, int64_t parts, int64_t offset, const FreeDims& dims);
// `parts` rows of `t`, `pstride` elements apart, from element `offset`.
kernels::View hbm_pattern(const kernels::Tensor& t, int64_t offset, int64_t parts, int64_t pstride, const FreeDims& dims);

}  // namespace trnsim::compiler
