// Derived chip numbers: the clock-derived TensorE peak, the peak trnsim reports, the roofline knee.
#include "trnsim/hw/chip_spec.h"

#include <fmt/core.h>

#include "trnsim/common/error.h"

namespace trnsim::hw {

TFlops ChipSpec::clock_derived_tflops(DType t) const {
  auto it = core.tensor.dtype_rate.find(t);
  if (it == core.tensor.dtype_rate.end()) {
    std::string runs;
    for (auto& [d, r] : core.tensor.dtype_rate) runs += (runs.empty() ? "" : ", ") + std::string(numerics::name(d));
    throw UnsupportedError(fmt::format("{}: TensorE does not run {} (it runs {})", name, numerics::name(t), runs));
  }
  // A systolic array does rows x cols MACs (2 FLOP each) per cycle; GHz x 1e9 / 1e12 = 1e-3 TFLOPS.
  const auto& te = core.tensor;
  return TFlops(te.rows * te.cols * 2.0 * te.clock.value() * 1e-3 * neuron_cores * it->second);
}

TFlops ChipSpec::peak_tflops(DType t) const {
  auto it = dense_tflops.find(t);
  return it != dense_tflops.end() ? it->second : clock_derived_tflops(t);
}

double ChipSpec::roofline_knee(DType t) const {
  // TFLOPS (1e12 FLOP/s) over GB/s (1e9 B/s): FLOP per byte.
  return peak_tflops(t).value() * 1e3 / hbm.bandwidth.value();
}

}  // namespace trnsim::hw
