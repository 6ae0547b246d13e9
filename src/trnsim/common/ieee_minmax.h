// IEEE 754-2019 maximum/minimum: a NaN operand gives NaN (ONNX Max/Min/Clip, numpy, PyTorch
// and onnxruntime all propagate it), and -0 orders below +0. std::fmax/fmin and std::max/min
// drop a NaN instead (NaN through Max became the other operand: a silent wrong answer).
#pragma once
#include <cmath>

namespace trnsim {

template <class T>
inline T ieee_maximum(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;  // a quiet NaN
  if (a == b) return std::signbit(a) ? b : a;        // max(-0, +0) = +0
  return a > b ? a : b;
}

template <class T>
inline T ieee_minimum(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (a == b) return std::signbit(a) ? a : b;        // min(-0, +0) = -0
  return a < b ? a : b;
}

}  // namespace trnsim
