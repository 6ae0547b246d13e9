#include "trnsim/fabric/torus_topology.h"

#include <fmt/format.h>

#include "trnsim/common/error.h"

namespace trnsim::fabric {

TorusTopology::TorusTopology(std::string kind, std::vector<int> dims, std::vector<GBps> bw_per_dim,
                             Nanoseconds link_latency)
    : kind_(std::move(kind)), dims_(std::move(dims)) {
  if (dims_.empty()) throw ConfigError(fmt::format("topology {}: needs dims", kind_));
  if (bw_per_dim.size() != dims_.size())
    throw ConfigError(fmt::format("topology {}: {} bandwidths for {} dims", kind_, bw_per_dim.size(), dims_.size()));
  for (int d : dims_) {
    if (d < 1) throw ConfigError(fmt::format("topology {}: dimension of size {}", kind_, d));
    stride_.push_back(chips_);
    chips_ *= d;
  }
  const int nd = static_cast<int>(dims_.size());
  link_id_.assign(static_cast<size_t>(chips_) * nd * 2, -1);
  for (int c = 0; c < chips_; ++c) {
    auto xyz = coords(c);
    for (int d = 0; d < nd; ++d) {
      if (dims_[d] == 1) continue;
      const int n_links = dims_[d] == 2 ? 1 : 2;  // size 2: both directions reach one neighbour
      const GBps bw = bw_per_dim[d] / n_links;
      if (bw.value() <= 0)
        throw ConfigError(fmt::format("topology {}: dimension {} has no bandwidth", kind_, d));
      for (int dir = 0; dir < n_links; ++dir) {
        auto n = xyz;
        n[d] = (n[d] + (dir == 0 ? 1 : dims_[d] - 1)) % dims_[d];
        link_id_[(c * nd + d) * 2 + dir] = static_cast<int>(links_.size());
        links_.push_back({c, chip_at(n), bw, link_latency,
                          fmt::format("{}{}", "xyzuvw"[d % 6], dir == 0 ? '+' : '-')});
      }
      if (n_links == 1) link_id_[(c * nd + d) * 2 + 1] = link_id_[(c * nd + d) * 2];
    }
  }
}

std::vector<int> TorusTopology::coords(int chip) const {
  std::vector<int> c(dims_.size());
  for (size_t d = 0; d < dims_.size(); ++d) c[d] = (chip / stride_[d]) % dims_[d];
  return c;
}

int TorusTopology::chip_at(const std::vector<int>& c) const {
  int id = 0;
  for (size_t d = 0; d < dims_.size(); ++d) id += c[d] * stride_[d];
  return id;
}

void TorusTopology::route(int a, int b, std::vector<int>& out) const {
  int cur = a;
  for (size_t d = 0; d < dims_.size(); ++d) {
    const int n = dims_[d];
    const int from = (cur / stride_[d]) % n, to = (b / stride_[d]) % n;
    const int fwd = (to - from + n) % n;  // hops going +1
    if (fwd == 0) continue;
    // Half-way round both ways are equally short: even coordinates go +, odd ones -, so that
    // the two directions of a ring carry the same load (all-+ would load them 3:1 on a 4-ring).
    const bool plus = fwd < n - fwd || (fwd == n - fwd && from % 2 == 0);
    const int steps = plus ? fwd : n - fwd;
    for (int s = 0; s < steps; ++s) {
      const int l = link_of(cur, static_cast<int>(d), plus ? 0 : 1);
      out.push_back(l);
      cur = links_[l].dst;
    }
  }
}

std::vector<int> TorusTopology::ring_order() const {
  // Reflected mixed-radix Gray code: consecutive chips differ by one step in one dimension, and
  // with even sizes the walk ends one wrap-around hop from where it started.
  std::vector<int> order;
  order.reserve(chips_);
  std::vector<int> c(dims_.size(), 0);
  std::vector<int> dir(dims_.size(), 1);
  order.push_back(chip_at(c));
  for (int k = 1; k < chips_; ++k) {
    for (size_t d = 0; d < dims_.size(); ++d) {
      const int next = c[d] + dir[d];
      if (next >= 0 && next < dims_[d]) {
        c[d] = next;
        break;
      }
      dir[d] = -dir[d];  // this digit turns round; carry into the next dimension
    }
    order.push_back(chip_at(c));
  }
  return order;
}

std::string TorusTopology::describe() const {
  std::vector<std::string> bw;
  for (size_t d = 0; d < dims_.size(); ++d) {
    const int l = dims_[d] > 1 ? link_of(0, static_cast<int>(d), 0) : -1;
    bw.push_back(l < 0 ? "-" : fmt::format("{:g}", links_[l].bandwidth.value()));
  }
  return fmt::format("{} {} ({} chips), GB/s per link by dimension: {}", kind_, fmt::join(dims_, "x"), chips_,
                     fmt::join(bw, "/"));
}

namespace {
std::unique_ptr<ITopology> make_torus(const hw::TopologySpec& s, int chips, size_t want_dims) {
  if (want_dims && s.dims.size() != want_dims)
    throw ConfigError(fmt::format("topology {}: expected {} dims, got {}", s.kind, want_dims, s.dims.size()));
  std::vector<GBps> bw = s.bandwidth_per_dim;
  if (bw.empty()) {
    int active = 0;
    for (int d : s.dims) active += d > 1;
    for (int d : s.dims) bw.push_back(d > 1 ? s.bandwidth_per_chip / active : GBps(0));
  }
  auto t = std::make_unique<TorusTopology>(s.kind, s.dims, bw, s.link_latency);
  if (t->chips() != chips)
    throw ConfigError(fmt::format("topology {}: dims {} hold {} chips, the system has {}", s.kind,
                                  fmt::join(s.dims, "x"), t->chips(), chips));
  return t;
}
}  // namespace

void register_torus_topologies() {
  register_topology("torus2d", [](const hw::TopologySpec& s, int n) { return make_torus(s, n, 2); });
  register_topology("torus3d", [](const hw::TopologySpec& s, int n) { return make_torus(s, n, 3); });
  register_topology("ring", [](const hw::TopologySpec& s, int n) { return make_torus(s, n, 1); });
  register_topology("torus", [](const hw::TopologySpec& s, int n) { return make_torus(s, n, 0); });
}

}  // namespace trnsim::fabric
