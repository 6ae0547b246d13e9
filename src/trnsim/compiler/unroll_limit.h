// A decomposition that unrolls a kernel makes nodes per tap (pooling windows, depthwise Conv
// windows, ConvTranspose's flipped taps): at most this many, so that a 65,536-wide (or
// 2^40-wide) kernel is refused at once instead of building that many nodes (both hung).
#pragma once
#include <cstdint>

namespace trnsim::compiler {

inline constexpr int64_t kMaxUnrolledTaps = 4096;

}  // namespace trnsim::compiler
