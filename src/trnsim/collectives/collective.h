// The entry point of the collectives layer, shared by `trnsim collective` and trnsim.collective():
// a job (op, ranks, system, dtype, algorithm) timed at a list of sizes, or run on real data.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "trnsim/collectives/collective_costs.h"
#include "trnsim/collectives/collective_op.h"
#include "trnsim/collectives/schedule_timer.h"
#include "trnsim/fabric/fabric.h"
#include "trnsim/hw/chip_spec.h"

namespace trnsim::collectives {

struct CollectiveOptions {
  Op op = Op::AllReduce;
  int ranks = 0;               // 0: every NeuronCore of the system(s)
  int ranks_per_chip = 0;      // 0: the chip's NeuronCores (nccom-test counts NeuronCores)
  int systems = 1;             // copies of the system joined by EFA (an UltraCluster slice)
  numerics::DType dtype = numerics::DType::F32;
  std::string algorithm;       // "" / "auto": fastest applicable; else a registered name
  Launch launch = Launch::Standalone;  // InProgram: inside a compiled model (no program launch)
};

struct CollectiveResult {
  Op op;
  int ranks = 0;
  int64_t size_bytes = 0;
  int64_t count = 0;           // elements of the dtype in a rank's buffer
  double time_s = 0;
  double algbw_gbps = 0;       // size / time, GB/s (10^9 bytes/s)
  double busbw_gbps = 0;       // algbw x bus_factor(op, ranks)
  std::string algorithm;
  int steps = 0;
  double fixed_s = 0;          // launch and per-step fixed costs within time_s
  int64_t bytes_sent_per_rank = 0;  // the busiest rank's
  // Energy: the transfers' (fabric::LinkEnergy) plus the static power of the chips used over
  // time_s; empty energy_by_unit_j when the chip has no energy model. Steps are synchronous
  // and no power timeline is kept, so the peak reported is the average.
  double energy_j = 0;
  std::map<std::string, double> energy_by_unit_j;  // "HBM", "NeuronLink", "switch", "EFA", "static"
};

class CollectiveRunner {
 public:
  CollectiveRunner(const hw::SystemSpec& system, const CollectiveOptions& options);

  CollectiveResult time(int64_t size_bytes);  // timing mode
  // Functional mode (fp32): inputs[r] is rank r's input in NCCL terms (all-reduce, all-gather,
  // permute: the send buffer; reduce-scatter, all-to-all: the whole input); returns each rank's
  // output (all-gather: n pieces; reduce-scatter: its piece).
  std::vector<std::vector<float>> run(const std::vector<std::vector<float>>& inputs);

  const fabric::Fabric& fabric() const { return *fabric_; }
  const CollectiveCosts& costs() const { return costs_; }
  int elem_bytes() const { return elem_bytes_; }
  // Elements per rank buffer for `size_bytes`; ShapeError when the size does not split.
  int64_t count_for(int64_t size_bytes) const;

 private:
  CollectiveOptions opt_;
  int elem_bytes_;
  double static_power_w_ = -1;  // per chip; < 0: no energy model
  int64_t hbm_bytes_ = 0;  // one chip's HBM: no rank's buffer is larger
  CollectiveCosts costs_;
  std::unique_ptr<fabric::Fabric> fabric_;
  std::unique_ptr<ScheduleTimer> timer_;
};

}  // namespace trnsim::collectives
