#include "trnsim/sim/time.h"

#include <cstdio>
#include <string>

#include "trnsim/common/error.h"

namespace trnsim::sim {

void Time::throw_out_of_range(double ns, const char* what) {
  char v[64];
  std::snprintf(v, sizeof v, "%g", ns);
  throw ShapeError(std::string(what) + ": " + v +
                   " ns is outside the simulated clock (int64 picoseconds: up to about 106 days)");
}

void Time::throw_overflow() {
  throw ShapeError("simulated time past int64 picoseconds (about 106 days): the run is too long to simulate");
}

}  // namespace trnsim::sim
