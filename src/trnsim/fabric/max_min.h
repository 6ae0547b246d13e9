// Max-min fair rates by progressive filling: raise every flow's rate together until some
// resource is full; freeze the flows through it at that rate; repeat with the capacity left.
// The result is the unique allocation in which no flow can go faster without slowing one that
// is no faster than it (Bertsekas & Gallager, Data Networks, 6.5.2). Two flows on one link each
// get half; a flow held back elsewhere leaves its share to the others.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace trnsim::fabric {

// Flows in compressed form: flow f crosses resources path[offset[f] .. offset[f+1]); capacity
// is in any unit of rate (the result is in the same one). A flow crossing no resource has no
// limit and gets +infinity. Identical inputs give bit-identical rates, so flows in symmetric
// positions get exactly equal rates (what lets the network batch their completions).
class MaxMinSolver {
 public:
  void solve(std::span<const double> capacity, std::span<const int64_t> offset, std::span<const int> path,
             std::vector<double>& rate);

 private:
  // Scratch kept between calls: the network re-solves on every event.
  std::vector<double> left_;
  std::vector<int> unfrozen_;
  std::vector<int64_t> res_offset_;
  std::vector<int> res_flows_;
  std::vector<uint32_t> version_;
  std::vector<char> frozen_;
};

}  // namespace trnsim::fabric
