#include "trnsim/fabric/flow_network.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "trnsim/common/error.h"

namespace trnsim::fabric {

int FlowNetwork::add_resource(GBps capacity) {
  if (!(capacity.value() > 0)) throw ConfigError("flow network: a resource needs a positive capacity");
  capacity_.push_back(capacity.value());
  return static_cast<int>(capacity_.size()) - 1;
}

void FlowNetwork::start(sim::Time at, std::span<const int> path, double bytes, sim::Time latency, uint64_t tag) {
  if (at < now_) throw Error("flow network: a flow cannot start in the past");
  Flow f{bytes, 0, 0, latency.ps(), static_cast<int64_t>(path_pool_.size()), 0, tag};
  for (int r : path) {
    if (r < 0 || r >= resources()) throw Error("flow network: path names an unknown resource");
    path_pool_.push_back(r);
  }
  f.path_end = static_cast<int64_t>(path_pool_.size());
  flows_.push_back(f);
  pending_.push({at.ps(), seq_++, flows_.size() - 1});
}

void FlowNetwork::resolve() {
  offset_.assign(1, 0);
  path_.clear();
  for (int id : active_) {
    const Flow& f = flows_[id];
    path_.insert(path_.end(), path_pool_.begin() + f.path_begin, path_pool_.begin() + f.path_end);
    offset_.push_back(static_cast<int64_t>(path_.size()));
  }
  solver_.solve(capacity_, offset_, path_, rate_);
  ++solves_;
  for (size_t i = 0; i < active_.size(); ++i) {
    Flow& f = flows_[active_[i]];
    f.rate = rate_[i];
    // Round the drain time up: a transfer never takes less than the model says.
    const double ps = std::isinf(f.rate) ? 0.0 : f.remaining / f.rate * 1000.0;
    f.finish = (now_ + sim::Time::from_whole_ps(std::ceil(ps - 1e-9), ps * 1e-3, "a transfer's drain time (its bytes over the link bandwidth)")).ps();
  }
  dirty_ = false;
}

bool FlowNetwork::advance(std::vector<Delivery>& out) {
  const size_t before = out.size();
  while (out.size() == before) {
    if (dirty_) resolve();
    int64_t t = std::numeric_limits<int64_t>::max();
    if (!pending_.empty()) t = pending_.top().t;
    if (!deliveries_.empty()) t = std::min(t, deliveries_.top().t);
    for (int id : active_) t = std::min(t, flows_[id].finish);
    if (t == std::numeric_limits<int64_t>::max()) return false;

    const double dt_ns = static_cast<double>(t - now_.ps()) * 1e-3;
    now_ = sim::Time::ps(t);
    // Drain: flows whose last byte leaves now stop holding bandwidth; the rest move on.
    size_t kept = 0;
    for (int id : active_) {
      Flow& f = flows_[id];
      if (f.finish <= t) {
        f.remaining = 0;
        deliveries_.push({t + f.latency, seq_++, f.tag});
        dirty_ = true;
      } else {
        f.remaining = std::max(0.0, f.remaining - f.rate * dt_ns);
        active_[kept++] = id;
      }
    }
    active_.resize(kept);
    while (!pending_.empty() && pending_.top().t == t) {
      active_.push_back(static_cast<int>(pending_.top().id));
      pending_.pop();
      dirty_ = true;
    }
    // A flow that has just started with no bytes drains at once (resolve gives finish = now).
    if (dirty_) resolve();
    kept = 0;
    for (int id : active_) {
      Flow& f = flows_[id];
      if (f.finish <= t) {
        deliveries_.push({t + f.latency, seq_++, f.tag});
        dirty_ = true;
      } else {
        active_[kept++] = id;
      }
    }
    active_.resize(kept);
    while (!deliveries_.empty() && deliveries_.top().t == t) {
      out.push_back({deliveries_.top().id, now_});
      deliveries_.pop();
    }
  }
  return true;
}

void FlowNetwork::reset() {
  flows_.clear();
  path_pool_.clear();
  active_.clear();
  pending_ = MinHeap();
  deliveries_ = MinHeap();
  now_ = sim::Time();
  dirty_ = false;
}

}  // namespace trnsim::fabric
