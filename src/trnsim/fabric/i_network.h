// The narrow send/recv/schedule interface between whoever moves data (collective schedules
// today, a compiled program's DMA and collective instructions later) and the network model
// (DESIGN principle 4): post a transfer between ranks at a time, learn when it is delivered.
// The flow-level Fabric implements it; a finer (packet-level) model can replace it unchanged.
//
// Contract: send() with at >= now(); advance() moves time to the next delivery and appends every
// transfer delivered at that instant (tag, time), returning false when nothing is in flight;
// a transfer from a rank to itself is delivered at `at`; reset() forgets all transfers and
// returns to time 0.
#pragma once
#include <cstdint>
#include <vector>

#include "trnsim/common/units.h"
#include "trnsim/fabric/flow_network.h"
#include "trnsim/fabric/link.h"
#include "trnsim/sim/time.h"

namespace trnsim::fabric {

class INetwork {
 public:
  virtual ~INetwork() = default;
  virtual int ranks() const = 0;
  virtual void send(int src, int dst, Bytes bytes, sim::Time at, uint64_t tag) = 0;
  virtual bool advance(std::vector<Delivery>& delivered) = 0;
  virtual sim::Time now() const = 0;
  virtual void reset() = 0;
  // Adds the energy of moving `bytes` from src to dst to `out` (a network without an energy
  // model adds nothing).
  virtual void tally_energy(int src, int dst, double bytes, LinkEnergy& out) const {}
  // Whether a transfer from src to dst leaves its chip (a network without chips: never).
  virtual bool crosses_chips(int src, int dst) const { return false; }
};

}  // namespace trnsim::fabric
