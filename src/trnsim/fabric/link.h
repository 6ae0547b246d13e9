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

// Energy of transfers by where it is spent (hw::EnergySpec / hw::SystemEnergySpec coefficients).
struct LinkEnergy {
  double hbm_j = 0;         // the sender's HBM read and the receiver's HBM write
  double neuronlink_j = 0;  // chip-to-chip link traversals (SerDes at both ends)
  double switch_j = 0;      // scale-up switch traversals
  double scale_out_j = 0;   // EFA / InfiniBand
  double total() const { return hbm_j + neuronlink_j + switch_j + scale_out_j; }
  LinkEnergy& operator+=(const LinkEnergy& o) {
    hbm_j += o.hbm_j; neuronlink_j += o.neuronlink_j; switch_j += o.switch_j; scale_out_j += o.scale_out_j;
    return *this;
  }
};

}  // namespace trnsim::fabric
