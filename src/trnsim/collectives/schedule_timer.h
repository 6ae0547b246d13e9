// Timing mode: runs a schedule on a network (fabric::INetwork) and adds the fixed costs.
// A step costs its fixed part (sync handshake + CC-core step work + descriptor set-up of the
// busiest rank's transfers over its DMA rings), the network time of its transfers (all posted
// at once, max-min fair sharing, until the last is delivered), and the reduction tail at the
// receivers (the last pipeline chunk's add, plus any backlog when the adds are slower than the
// data). A step with a transfer between chips lasts at least `cross_chip_step` (its handshake
// across the fabric, concurrent with the rest). A collective costs its launch plus its steps.
//
// Exactness of the speed-up: the network is idle at every step boundary (steps are
// synchronous), so a step's duration is a function of its multiset of (src, dst, count, reduce)
// alone. The timer keys steps on exactly that list and simulates each distinct one once: a
// ring's 2(n-1) identical steps cost one simulation, with the same result as simulating all.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "trnsim/collectives/collective_costs.h"
#include "trnsim/collectives/schedule.h"
#include "trnsim/fabric/i_network.h"

namespace trnsim::collectives {

struct ScheduleTiming {
  Nanoseconds total;
  Nanoseconds fixed;            // launch and per-step fixed costs, within total
  int steps = 0;                // steps with at least one transfer
  int simulated_steps = 0;      // distinct steps run through the network
  int64_t transfers = 0;        // over all steps
  int64_t max_bytes_sent_per_rank = 0;  // over the whole collective (for closed-form checks)
  fabric::LinkEnergy energy;    // of every transfer (INetwork::tally_energy)
};

class ScheduleTimer {
 public:
  ScheduleTimer(fabric::INetwork& net, const CollectiveCosts& costs, int elem_bytes)
      : net_(net), costs_(costs), elem_bytes_(elem_bytes) {}
  ScheduleTiming time(const ISchedule& schedule);

 private:
  struct StepCost {
    Nanoseconds fixed, total;
    fabric::LinkEnergy energy;
  };
  StepCost simulate(const std::vector<Transfer>& step);

  fabric::INetwork& net_;
  CollectiveCosts costs_;
  int elem_bytes_;
  std::unordered_map<uint64_t, std::vector<std::pair<std::vector<int64_t>, StepCost>>> memo_;
  std::vector<fabric::Delivery> delivered_;
};

}  // namespace trnsim::collectives
