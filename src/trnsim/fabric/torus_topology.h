// An N-dimensional torus: each chip links to its two neighbours along every dimension
// (one neighbour when the dimension has size 2, none when 1), with wrap-around. Covers the
// trn1/trn2 4x4 torus ("torus2d"), the Trn2 UltraServer's 4x4 torus per instance with the four
// instances joined in a ring along Z ("torus3d" with a slower Z, via bandwidth_per_dim), and
// the inf2 ring ("ring", one dimension).
//
// Bandwidth: a chip's per-dimension bandwidth (TopologySpec::bandwidth_per_dim, else
// bandwidth_per_chip split evenly over the dimensions of size > 1) is what it can send along
// that dimension, split evenly over its outgoing links there; every link is full duplex, so
// the reverse direction has the same. Routes are dimension-order (dimension 0 first), each
// dimension the short way round (ties, half-way round: + from even coordinates, - from odd
// ones, which balances the two directions), as deterministic torus routers do.
#pragma once
#include <vector>

#include "trnsim/fabric/i_topology.h"

namespace trnsim::fabric {

class TorusTopology : public ITopology {
 public:
  TorusTopology(std::string kind, std::vector<int> dims, std::vector<GBps> bandwidth_per_dim,
                Nanoseconds link_latency);

  std::string_view kind() const override { return kind_; }
  int chips() const override { return chips_; }
  const std::vector<Link>& links() const override { return links_; }
  void route(int a, int b, std::vector<int>& out) const override;
  std::vector<int> ring_order() const override;  // a reflected (snake) Gray-code walk
  std::string describe() const override;

  const std::vector<int>& dims() const { return dims_; }
  std::vector<int> coords(int chip) const;
  int chip_at(const std::vector<int>& c) const;

 private:
  int link_of(int chip, int dim, int dir) const { return link_id_[(chip * dims_.size() + dim) * 2 + dir]; }

  std::string kind_;
  std::vector<int> dims_;
  std::vector<int> stride_;
  int chips_ = 1;
  std::vector<Link> links_;
  std::vector<int> link_id_;  // [chip][dim][dir: 0 = +1, 1 = -1] -> link, -1 if none
};

}  // namespace trnsim::fabric
