#include "trnsim/sim/bandwidth.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "trnsim/common/error.h"

namespace trnsim::sim {

int BandwidthNetwork::add_resource(std::string name, GBps capacity) {
  if (capacity.value() <= 0) throw Error("BandwidthNetwork: resource '" + name + "' has no capacity");
  res_.push_back(Resource{std::move(name), capacity.value()});
  return static_cast<int>(res_.size()) - 1;
}

int BandwidthNetwork::start_flow(double bytes, std::initializer_list<int> resources, GBps cap,
                                 uint64_t tag) {
  Time now = q_.now();
  advance(now);
  int id;
  if (!free_ids_.empty()) { id = free_ids_.back(); free_ids_.pop_back(); }
  else { id = static_cast<int>(flows_.size()); flows_.emplace_back(); }
  Flow& f = flows_[id];
  f = Flow{};
  f.remaining = std::max(bytes, 0.0);
  f.cap = cap.value();
  for (int r : resources) {
    if (f.nres == 3) throw Error("BandwidthNetwork: a flow uses at most 3 resources");
    f.res[f.nres++] = r;
    Resource& R = res_[r];
    if (R.users++ == 0) R.busy_since = now.ps();
    R.bytes += f.remaining;
  }
  f.tag = tag;
  f.active = true;
  ++active_;
  reallocate(now);
  return id;
}

void BandwidthNetwork::advance(Time now) {
  double dt = static_cast<double>((now - last_).ps()) * 1e-3;  // ns
  if (dt > 0)
    for (auto& f : flows_)
      if (f.active) f.remaining = std::max(0.0, f.remaining - f.rate * dt);
  last_ = now;
}

void BandwidthNetwork::reallocate(Time now) {
  // Progressive filling: raise all unfrozen flows' rates together until a resource is full or
  // a flow reaches its cap; freeze those flows; repeat.
  for (auto& f : flows_) f.rate = 0;
  auto& left = left_;
  auto& unfrozen_users = unfrozen_users_;
  auto& live = live_;
  auto& frozen = frozen_;
  left.resize(res_.size());
  unfrozen_users.assign(res_.size(), 0);
  for (size_t r = 0; r < res_.size(); ++r) left[r] = res_[r].capacity;
  live.clear();
  for (int i = 0; i < static_cast<int>(flows_.size()); ++i)
    if (flows_[i].active) {
      live.push_back(i);
      for (int k = 0; k < flows_[i].nres; ++k) ++unfrozen_users[flows_[i].res[k]];
    }
  frozen.assign(flows_.size(), 0);
  size_t nfrozen = 0;
  while (nfrozen < live.size()) {
    double inc = std::numeric_limits<double>::infinity();
    for (size_t r = 0; r < res_.size(); ++r)
      if (unfrozen_users[r] > 0) inc = std::min(inc, left[r] / unfrozen_users[r]);
    for (int i : live)
      if (!frozen[i] && flows_[i].cap > 0) inc = std::min(inc, flows_[i].cap - flows_[i].rate);
    if (!std::isfinite(inc)) inc = 0;  // flows with no resource and no cap: instantaneous
    for (int i : live) {
      if (frozen[i]) continue;
      flows_[i].rate += inc;
      for (int k = 0; k < flows_[i].nres; ++k) left[flows_[i].res[k]] -= inc;
    }
    // Freeze flows at their cap or on a saturated resource.
    for (int i : live) {
      if (frozen[i]) continue;
      Flow& f = flows_[i];
      bool stop = (f.cap > 0 && f.rate >= f.cap * (1 - 1e-12)) || inc == 0;
      for (int k = 0; k < f.nres && !stop; ++k) stop = left[f.res[k]] <= res_[f.res[k]].capacity * 1e-12;
      if (stop) {
        frozen[i] = 1;
        ++nfrozen;
        for (int k = 0; k < f.nres; ++k) --unfrozen_users[f.res[k]];
      }
    }
  }
  // Next completion.
  ++generation_;
  double best = std::numeric_limits<double>::infinity();
  for (int i : live) {
    const Flow& f = flows_[i];
    double t = f.remaining <= 0 ? 0.0 : (f.rate > 0 ? f.remaining / f.rate : std::numeric_limits<double>::infinity());
    best = std::min(best, t);
  }
  if (std::isfinite(best))
    q_.schedule(now + Time::from_ns(best, "a transfer's drain time (its bytes over the link bandwidth)"), this, generation_);
}

void BandwidthNetwork::on_event(Time now, uint64_t arg) {
  if (arg != generation_) return;  // superseded by a later reallocation
  advance(now);
  // Finish every flow that is done (tolerance: a thousandth of a byte).
  auto& done = done_;
  auto& tags = tags_;
  done.clear();
  tags.clear();
  for (int i = 0; i < static_cast<int>(flows_.size()); ++i) {
    Flow& f = flows_[i];
    if (f.active && f.remaining <= 1e-3 + f.rate * 1e-3) { done.push_back(i); tags.push_back(f.tag); }
  }
  for (int i : done) {
    Flow& f = flows_[i];
    f.active = false;
    --active_;
    for (int k = 0; k < f.nres; ++k) {
      Resource& R = res_[f.res[k]];
      if (--R.users == 0) R.busy_ps += now.ps() - R.busy_since;
    }
    free_ids_.push_back(i);
  }
  reallocate(now);
  // on_done_ may start flows (start_flow -> reallocate, which does not touch tags_) but cannot
  // re-enter on_event (that only runs from the event queue), so tags_ is stable here.
  for (size_t i = 0, n = tags.size(); i < n; ++i) on_done_(ctx_, now, tags_[i]);
}

}  // namespace trnsim::sim
