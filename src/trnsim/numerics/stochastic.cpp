// The rounding grids of the element formats (stochastic rounding itself is inline in
// stochastic.h, so the conversion loops can inline it).
#include "trnsim/numerics/stochastic.h"

#include "trnsim/common/error.h"
#include "trnsim/numerics/float_codec.h"

namespace trnsim::numerics::detail {

Grid grid_of(DType t) {
  auto of = [](const FloatFormat& f) {
    return Grid{f.min_normal_bits(), f.man_bits, f.quantum_exp(), false, false};
  };
  switch (t) {
    case DType::F32: return Grid{0x00800000u, 23, -149, false, true};
    case DType::BF16: return of(kBF16);
    case DType::F16: return of(kF16);
    case DType::F8E4M3: return of(kF8E4M3);
    case DType::F8E5M2: return of(kF8E5M2);
    case DType::F8E3M4: return of(kF8E3M4);
    case DType::F4E2M1: return of(kF4E2M1);
    // E8M0: powers of two from 2^-126 up (normal fp32); below that only 2^-127 exists.
    case DType::E8M0: return Grid{0x00800000u, 0, -127, true, false};
    // int8: the integers; no "normal" range, every finite value uses the fixed step 2^0.
    case DType::I8: return Grid{0x7F800000u, 23, 0, false, false};
    default: throw UnsupportedError("stochastic rounding: " + std::string(name(t)) +
                                    " is not an element format");
  }
}

}  // namespace trnsim::numerics::detail
