// A directed link of the fabric: one direction of a NeuronLink, a chip's uplink into a switch,
// an instance's EFA port. Nodes 0..chips-1 are chips; switches and NICs are numbered after them.
#pragma once
#include <string>

#include "trnsim/common/units.h"

namespace trnsim::fabric {

struct Link {
  int src = 0;
  int dst = 0;
  GBps bandwidth;       // in this direction
  Nanoseconds latency;  // added once per traversal
  std::string kind;     // "x+", "z-", "up", "down", "efa-tx", ... (for reports and tests)
};

}  // namespace trnsim::fabric
