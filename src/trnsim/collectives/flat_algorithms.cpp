// The flat algorithms: one group of all ranks. ring (bandwidth-optimal, neighbour traffic only,
// 2(n-1) steps for an all-reduce), direct (one step per half, n-1 transfers per rank, for
// latency and for all-to-all / permute), halving-doubling (log2 n steps per half, distant
// partners; power-of-two rank counts).
#include <fmt/format.h>

#include "trnsim/collectives/group.h"
#include "trnsim/collectives/i_collective_algorithm.h"

namespace trnsim::collectives {
namespace {

Phase phase_of(Op op) {
  switch (op) {
    case Op::AllReduce: return Phase::AllReduce;
    case Op::AllGather: return Phase::AllGather;
    case Op::ReduceScatter: return Phase::ReduceScatter;
    case Op::AllToAll: return Phase::AllToAll;
    default: return Phase::Permute;
  }
}

bool is_reduction_family(Op op) {
  return op == Op::AllReduce || op == Op::AllGather || op == Op::ReduceScatter;
}

class RingAlgorithm : public ICollectiveAlgorithm {
 public:
  std::string_view name() const override { return "ring"; }
  std::string why_not(const CollectiveJob& j) const override {
    return is_reduction_family(j.op) ? "" : fmt::format("ring does not run {} (use direct)", collectives::name(j.op));
  }
  std::unique_ptr<ISchedule> schedule(const CollectiveJob& j) const override {
    return ring_schedule(whole_group(j), phase_of(j.op));
  }
};

class DirectAlgorithm : public ICollectiveAlgorithm {
 public:
  std::string_view name() const override { return "direct"; }
  std::string why_not(const CollectiveJob&) const override { return ""; }
  std::unique_ptr<ISchedule> schedule(const CollectiveJob& j) const override {
    return direct_schedule(whole_group(j), phase_of(j.op));
  }
};

class HalvingDoublingAlgorithm : public ICollectiveAlgorithm {
 public:
  std::string_view name() const override { return "halving-doubling"; }
  std::string why_not(const CollectiveJob& j) const override {
    if (!is_reduction_family(j.op)) return fmt::format("halving-doubling does not run {}", collectives::name(j.op));
    const int n = j.ranks();
    if (n & (n - 1)) return fmt::format("halving-doubling needs a power-of-two number of ranks, got {}", n);
    return "";
  }
  std::unique_ptr<ISchedule> schedule(const CollectiveJob& j) const override {
    return halving_doubling_schedule(whole_group(j), phase_of(j.op));
  }
};

}  // namespace

void register_ring_algorithm() { register_algorithm(std::make_unique<RingAlgorithm>()); }
void register_direct_algorithm() { register_algorithm(std::make_unique<DirectAlgorithm>()); }
void register_halving_doubling_algorithm() { register_algorithm(std::make_unique<HalvingDoublingAlgorithm>()); }

}  // namespace trnsim::collectives
