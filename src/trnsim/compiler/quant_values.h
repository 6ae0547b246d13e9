// The arithmetic of weight quantisation, on a constant's values (row-major rows x cols), kept
// apart from the graph rewriting (quantize.cpp) so that tests can hold it to numpy/ml_dtypes.
#pragma once
#include <cstdint>
#include <vector>

#include "trnsim/compiler/ir.h"

namespace trnsim::compiler {

struct QuantValues {
  std::vector<double> codes;   // rows x cols, values on the code type's grid (int8: integers)
  std::vector<double> scales;  // scaled: 1, cols or rows values; MX: one per block of 32
  ElemType type = ElemType::Float;
  ElemType scale_type = ElemType::Float;
};

// Symmetric scaled quantisation: scale = max|x| / qmax (127 for int8, 448 for fp8 e4m3; 1 when
// all zero), codes = x / scale rounded half to even (int8, clamped to +-127) or converted to
// e4m3 with saturation (fp8). One scale for all (per_axis -1), per column (1) or per row (0).
QuantValues quantize_scaled(const std::vector<double>& v, int64_t rows, int64_t cols, ElemType code_type, int per_axis);

// OCP MX: blocks of 32 along `block_axis` (0: down a column, as K of a [K, N] weight; 1: along
// a row), scale 2^(floor(log2(amax)) - emax) as numerics::mx_quantize; codes are the element
// values (fp8 e4m3 or fp4 e2m1) before scaling; scales [rows/32, cols] or [rows, cols/32].
QuantValues quantize_mx(const std::vector<double>& v, int64_t rows, int64_t cols, ElemType element, int block_axis);

// 4:16 magnitude pruning down each column of a [K, N] weight (K a multiple of 16): of every 16
// consecutive values along K keep the 4 of largest |w| (ties: lower index), zero the rest.
std::vector<double> prune_4_16(const std::vector<double>& v, int64_t k, int64_t n);

}  // namespace trnsim::compiler
