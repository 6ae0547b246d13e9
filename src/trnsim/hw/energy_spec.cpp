#include "trnsim/hw/energy_spec.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"

namespace trnsim::hw {

double EnergySpec::min_clock_scale() const {
  return operating_points.empty() ? 1.0 : operating_points.back().clock_scale;
}

double EnergySpec::voltage_at(double f) const {
  if (operating_points.empty()) {
    if (f == 1.0) return 1.0;
    throw UnsupportedError("the chip has no DVFS operating points (energy.operating_points): only clock scale 1");
  }
  if (!(f <= 1.0 + 1e-12) || f < min_clock_scale() - 1e-12)
    throw UnsupportedError(fmt::format("clock scale {:g} outside the chip's operating points [{:g}, 1]", f,
                                       min_clock_scale()));
  for (size_t i = 1; i < operating_points.size(); ++i) {
    const auto& hi = operating_points[i - 1];
    const auto& lo = operating_points[i];
    if (f >= lo.clock_scale) {
      const double t = (f - lo.clock_scale) / (hi.clock_scale - lo.clock_scale);
      return lo.voltage_scale + t * (hi.voltage_scale - lo.voltage_scale);
    }
  }
  return operating_points.front().voltage_scale;
}

}  // namespace trnsim::hw
