#include "trnsim/workloads/serve_cluster.h"

#include <fmt/core.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <memory>
#include <queue>
#include <unordered_map>

#include "trnsim/common/error.h"
#include "trnsim/workloads/serve_replica.h"
#include "trnsim/workloads/serve_router.h"
#include "trnsim/workloads/traffic_random.h"
#include "trnsim/workloads/traffic_workload.h"

namespace trnsim::workloads {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

enum class Ev : uint8_t { IterDone, ReplicaUp, Fail, LinkRestore, Autoscale, TransferDone, MtbfFail, LinkMtbfFail };

struct Event {
  double t;
  uint64_t seq;  // schedule order: the tie-break that makes equal times deterministic
  Ev type;
  int32_t replica;
  uint32_t gen;
  int64_t a;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

class Cluster {
 public:
  Cluster(const ServeOptions& opt, const ServeSetup& setup, const ServeProgress& progress)
      : opt_(opt), setup_(setup), progress_(progress), out_(opt.timeline_bin_s), router_(opt.cluster.router),
        decode_router_(opt.cluster.router), source_(opt.traffic, setup.max_context),
        fail_rng_(opt.traffic.seed ^ 0x9e3779b97f4a7c15ULL),
        link_rng_(opt.traffic.seed ^ 0xc2b2ae3d27d4eb4fULL) {}

  ServeOutcome run();

 private:
  ServeRecorder& rec() { return out_.rec; }
  void push(double t, Ev type, int replica = 0, uint32_t gen = 0, int64_t a = -1) {
    heap_.push(Event{t, seq_++, type, replica, gen, a});
  }
  void start();
  void check_fits(const Request& r, int64_t id) const;
  bool finished() const;
  void advance(double t);
  void sample(size_t bin);
  void arrive(int64_t req, double now);
  void route(int64_t req, double now);
  void route_decode(const Handoff& h, double now);
  void kick(Replica& r, double now);
  void flush_kicks(double now);
  double next_arrival() const {
    return next_arrival_ < static_cast<size_t>(std::max<int64_t>(total_, 0)) ? out_.rec.requests[next_arrival_].arrival_s
                                                                             : kNever;
  }
  void dispatch(const Event& e);
  void on_iteration_done(const Event& e);
  void on_replica_up(const Event& e);
  void on_failure(const Event& e);
  void on_transfer_done(const Event& e);
  void lose(int idx, double now, const std::string& what, double repair_s);
  void retry(int64_t req, double now);
  void completed(int64_t req, double now);
  void autoscale(double now);
  void schedule_mtbf(int idx, double now);
  void schedule_link_mtbf(int idx, double now);
  void on_link_mtbf(const Event& e);
  void remove(Replica& r, double now);
  Replica& add_replica(ReplicaRole role, bool cold, double now);
  std::vector<Replica*> eligible(ReplicaRole role);

  const ServeOptions& opt_;
  const ServeSetup& setup_;
  ServeProgress progress_;
  ServeOutcome out_;
  Router router_, decode_router_;
  RequestSource source_;
  std::mt19937_64 fail_rng_;
  std::mt19937_64 link_rng_;  // own stream: link draws leave the chip draws of a seed unchanged
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::vector<double> created_s_, removed_s_, link_free_s_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> heap_;
  uint64_t seq_ = 0;
  std::deque<int64_t> pending_;          // no replica up to take them
  std::deque<Handoff> pending_decode_;   // no decode replica up
  std::vector<int32_t> client_of_;
  int active_clients_ = 0;
  int64_t total_ = -1, in_system_ = 0;
  size_t next_arrival_ = 0, sampled_bins_ = 0;
  double now_ = 0, busy_at_last_tick_ = 0;
  IterationOutput io_;
  std::vector<int> to_kick_;
  std::unordered_map<int64_t, int64_t> pending_transfer_kv_;  // request -> KV tokens in flight
};

Replica& Cluster::add_replica(ReplicaRole role, bool cold, double now) {
  const int id = static_cast<int>(replicas_.size());
  replicas_.push_back(std::make_unique<Replica>(id, role, *setup_.cost, opt_.engine, setup_.kv_blocks, rec()));
  Replica& r = *replicas_.back();
  created_s_.push_back(now);
  removed_s_.push_back(kNever);
  link_free_s_.push_back(0);
  r.state_since_s = now;
  if (cold) {
    r.state = ReplicaState::Cold;
    push(now + setup_.cold.total_s(), Ev::ReplicaUp, id, r.generation);
  } else {
    schedule_mtbf(id, now);
    schedule_link_mtbf(id, now);
  }
  return r;
}

std::vector<Replica*> Cluster::eligible(ReplicaRole role) {
  std::vector<Replica*> out;
  for (auto& r : replicas_)
    if (r->state == ReplicaState::Up && r->role() == role) out.push_back(r.get());
  return out;
}

void Cluster::start() {
  const auto& c = opt_.cluster;
  for (int i = 0; i < c.prefill_replicas; ++i) add_replica(ReplicaRole::Prefill, opt_.cold.start_cold, 0);
  int n = c.replicas;
  if (c.autoscale_max > 0) n = std::clamp(n, std::max(1, c.autoscale_min), c.autoscale_max);
  for (int i = 0; i < n; ++i)
    add_replica(c.prefill_replicas > 0 ? ReplicaRole::Decode : ReplicaRole::Both, opt_.cold.start_cold, 0);
  for (size_t i = 0; i < c.failures.size(); ++i) {
    if (c.failures[i].replica >= static_cast<int>(replicas_.size()))
      throw ConfigError(fmt::format("--fail {}:{}@{}: there are only {} replicas (numbered from 0)",
                                    c.failures[i].what, c.failures[i].replica, c.failures[i].at_s, replicas_.size()));
    push(c.failures[i].at_s, Ev::Fail, c.failures[i].replica, 0, static_cast<int64_t>(i));
  }
  if (c.autoscale_max > 0) push(c.autoscale_interval_s, Ev::Autoscale);
  if (!source_.closed_loop()) {
    rec().requests = source_.all();
    total_ = static_cast<int64_t>(rec().requests.size());
    rec().records.resize(rec().requests.size());
    for (size_t i = 0; i < rec().requests.size(); ++i) check_fits(rec().requests[i], static_cast<int64_t>(i));
    return;
  }
  for (int cl = 0; cl < opt_.traffic.concurrency; ++cl) {
    Request r;
    if (!source_.next(0, static_cast<int64_t>(rec().requests.size()), r)) break;
    check_fits(r, static_cast<int64_t>(rec().requests.size()));
    rec().requests.push_back(r);
    rec().records.emplace_back();
    client_of_.push_back(cl);
    ++active_clients_;
  }
}

// A request that could never be held in one replica's KV cache would be preempted forever.
void Cluster::check_fits(const Request& r, int64_t id) const {
  const auto& e = opt_.engine;
  const int64_t bt = e.block_tokens;
  int64_t tokens = r.input + r.output;
  if (e.batching == "static") {
    if (!e.buckets.empty() && r.input > e.buckets.back())
      throw ConfigError(fmt::format("request {}: a prompt of {} tokens is past the largest sequence bucket ({})", id,
                                    r.input, e.buckets.back()));
  }
  if ((tokens + bt - 1) / bt > setup_.kv_blocks)
    throw ShapeError(fmt::format("deployment does not fit: request {} needs {} KV tokens ({} + {}), the KV cache of a "
                                 "replica holds {}; use more --tp or shorter requests",
                                 id, tokens, r.input, r.output, setup_.kv_blocks * bt));
}

bool Cluster::finished() const {
  if (total_ >= 0) return out_.rec.completed == total_;
  return active_clients_ == 0;
}

void Cluster::sample(size_t bin) {
  TimelineBin& b = rec().timeline.at((static_cast<double>(bin) + 0.5) * rec().timeline.bin_s());
  b.waiting = static_cast<int64_t>(pending_.size() + pending_decode_.size());
  double kv = 0;
  for (auto& r : replicas_) {
    if (r->state != ReplicaState::Up && r->state != ReplicaState::Draining) continue;
    b.running += r->running();
    b.waiting += r->waiting();
    kv += r->kv().utilization();
    ++b.replicas_up;
  }
  b.kv_utilization = b.replicas_up ? kv / static_cast<double>(b.replicas_up) : 0;
}

void Cluster::advance(double t) {
  if (t <= now_) return;
  rec().in_system_integral += static_cast<double>(in_system_) * (t - now_);
  const double bin = rec().timeline.bin_s();
  while (static_cast<double>(sampled_bins_ + 1) * bin <= t) sample(sampled_bins_++);
  now_ = t;
}

void Cluster::arrive(int64_t req, double now) {
  ++in_system_;
  ++rec().timeline.at(now).arrivals;
  route(req, now);
}

void Cluster::route(int64_t req, double now) {
  const auto cands = eligible(opt_.cluster.prefill_replicas > 0 ? ReplicaRole::Prefill : ReplicaRole::Both);
  if (cands.empty()) {
    pending_.push_back(req);
    return;
  }
  Replica* r = router_.pick(cands, rec().requests[req].prefix_group, opt_.engine.max_seqs);
  r->enqueue(req);
  kick(*r, now);
}

void Cluster::route_decode(const Handoff& h, double now) {
  const auto cands = eligible(ReplicaRole::Decode);
  if (cands.empty()) {
    pending_decode_.push_back(h);
    return;
  }
  Replica* r = decode_router_.pick(cands, -1, opt_.engine.max_seqs);
  r->enqueue(h.req, h.kv_tokens, 1);
  kick(*r, now);
}

// Idle replicas start their next iteration once every event of the current instant is handled,
// so requests that arrive together (offline) are scheduled together.
void Cluster::kick(Replica& r, double now) {
  if (!r.busy()) to_kick_.push_back(r.id());
}

void Cluster::flush_kicks(double now) {
  for (size_t i = 0; i < to_kick_.size(); ++i) {
    Replica& r = *replicas_[to_kick_[i]];
    if (r.busy() || (r.state != ReplicaState::Up && r.state != ReplicaState::Draining)) continue;
    if (r.start_iteration(now)) push(r.iteration_end(), Ev::IterDone, r.id(), r.generation);
  }
  to_kick_.clear();
}

void Cluster::on_iteration_done(const Event& e) {
  Replica& r = *replicas_[e.replica];
  if (e.gen != r.generation || r.state == ReplicaState::Down || r.state == ReplicaState::Removed) return;
  io_.clear();
  r.finish_iteration(e.t, io_);
  for (int64_t req : io_.completed) {
    --in_system_;
    completed(req, e.t);
  }
  const double kv_bytes_per_token = setup_.cost->kv_bytes_per_token_per_core().value() * setup_.cost->cores();
  for (const Handoff& h : io_.handoffs) {
    // One transfer at a time on the prefill replica's link; the decode replica is picked on arrival.
    const double bw = setup_.kv_transfer_gbps * 1e9 * r.link_fraction;
    const double start = std::max(e.t, link_free_s_[r.id()]);
    link_free_s_[r.id()] = start + static_cast<double>(h.kv_tokens) * kv_bytes_per_token / bw;
    const double done = link_free_s_[r.id()] + setup_.kv_transfer_latency_s;
    rec().records[h.req].transfer_s += done - e.t;
    push(done, Ev::TransferDone, r.id(), r.generation, h.req);
    pending_transfer_kv_[h.req] = h.kv_tokens;
  }
  if (r.state == ReplicaState::Draining && r.outstanding() == 0) return remove(r, e.t);
  kick(r, e.t);
}

void Cluster::remove(Replica& r, double now) {
  r.state = ReplicaState::Removed;
  removed_s_[r.id()] = now;
}

void Cluster::on_transfer_done(const Event& e) {
  if (replicas_[e.replica]->generation != e.gen) return retry(e.a, e.t);  // the source was lost
  const int64_t kv = pending_transfer_kv_[e.a];
  pending_transfer_kv_.erase(e.a);
  route_decode(Handoff{e.a, kv}, e.t);
}

void Cluster::retry(int64_t req, double now) {
  RequestRecord& rr = rec().records[req];
  ++rr.retries;
  rr.first_token_s = -1;
  ++rec().retries;
  ++rec().timeline.at(now).retries;
  pending_transfer_kv_.erase(req);
  route(req, now);
}

void Cluster::lose(int idx, double now, const std::string& what, double repair_s) {
  Replica& r = *replicas_[idx];
  if (r.state == ReplicaState::Down || r.state == ReplicaState::Removed) return;
  const auto reqs = r.evacuate();
  ++r.generation;
  r.state = ReplicaState::Down;
  r.link_fraction = 1.0;
  Incident inc{what, idx, now, -1, static_cast<int64_t>(reqs.size()), 0};
  out_.incidents.push_back(inc);
  push(now + repair_s + setup_.cold.total_s(), Ev::ReplicaUp, idx, r.generation,
       static_cast<int64_t>(out_.incidents.size() - 1));
  for (int64_t req : reqs) retry(req, now);
}

void Cluster::on_replica_up(const Event& e) {
  Replica& r = *replicas_[e.replica];
  if (e.gen != r.generation) return;
  r.state = ReplicaState::Up;
  r.state_since_s = e.t;
  if (e.a >= 0) out_.incidents[e.a].back_s = e.t;
  schedule_mtbf(r.id(), e.t);
  schedule_link_mtbf(r.id(), e.t);
  if (r.role() == ReplicaRole::Decode) {
    while (!pending_decode_.empty()) {
      const Handoff h = pending_decode_.front();
      pending_decode_.pop_front();
      route_decode(h, e.t);
    }
  } else {
    while (!pending_.empty()) {
      const int64_t req = pending_.front();
      pending_.pop_front();
      route(req, e.t);
    }
  }
  kick(r, e.t);
}

void Cluster::schedule_mtbf(int idx, double now) {
  if (!(opt_.cluster.mtbf_hours > 0)) return;
  const double rate = setup_.cost->chips() / (opt_.cluster.mtbf_hours * 3600.0);
  push(now + draw::exponential(fail_rng_, rate), Ev::MtbfFail, idx, replicas_[idx]->generation);
}

// One fabric attachment per chip: a replica's links fail at rate chips / MTBF.
void Cluster::schedule_link_mtbf(int idx, double now) {
  if (!(opt_.cluster.link_mtbf_hours > 0)) return;
  const double rate = setup_.cost->chips() / (opt_.cluster.link_mtbf_hours * 3600.0);
  push(now + draw::exponential(link_rng_, rate), Ev::LinkMtbfFail, idx, replicas_[idx]->generation);
}

// A drawn link failure halves the replica's fabric bandwidth until repaired; the next draw
// starts at the repair (a link already down does not fail again).
void Cluster::on_link_mtbf(const Event& e) {
  Replica& r = *replicas_[e.replica];
  if (r.generation != e.gen || r.state != ReplicaState::Up) return;
  r.link_fraction = 0.5;
  out_.incidents.push_back(Incident{"link (MTBF)", e.replica, e.t, -1, 0, 0.5});
  push(e.t + opt_.cluster.link_repair_s, Ev::LinkRestore, e.replica, r.generation,
       static_cast<int64_t>(out_.incidents.size() - 1));
}

void Cluster::on_failure(const Event& e) {
  const FailureEvent& f = opt_.cluster.failures[e.a];
  Replica& r = *replicas_[f.replica];
  if (f.what == "replica") return lose(f.replica, e.t, "replica", 0);
  if (f.what == "chip") return lose(f.replica, e.t, "chip", opt_.cluster.repair_s);
  if (r.state == ReplicaState::Down || r.state == ReplicaState::Removed) return;
  r.link_fraction = f.fraction;
  out_.incidents.push_back(Incident{f.what, f.replica, e.t, -1, 0, f.fraction});
  if (f.for_s >= 0)
    push(e.t + f.for_s, Ev::LinkRestore, f.replica, r.generation, static_cast<int64_t>(out_.incidents.size() - 1));
}

void Cluster::completed(int64_t req, double now) {
  if (!source_.closed_loop()) return;
  Request next;
  if (!source_.next(now, static_cast<int64_t>(rec().requests.size()), next)) {
    --active_clients_;
    return;
  }
  const int64_t id = static_cast<int64_t>(rec().requests.size());
  check_fits(next, id);
  rec().requests.push_back(next);
  rec().records.emplace_back();
  client_of_.push_back(client_of_[req]);
  arrive(id, now);
}

void Cluster::autoscale(double now) {
  int up = 0, cold = 0;
  int64_t waiting = static_cast<int64_t>(pending_.size());
  double busy = 0;
  for (auto& r : replicas_) {
    busy += r->busy_s;
    if (r->state == ReplicaState::Up) ++up, waiting += r->waiting();
    if (r->state == ReplicaState::Cold) ++cold;
  }
  const auto& c = opt_.cluster;
  const double utilization = up ? (busy - busy_at_last_tick_) / (c.autoscale_interval_s * up) : 1.0;
  busy_at_last_tick_ = busy;
  if (up + cold < c.autoscale_max && static_cast<double>(waiting) > c.scale_up_queue * (up + cold)) {
    add_replica(ReplicaRole::Both, true, now);
    ++out_.scale_ups;
  } else if (up > std::max(1, c.autoscale_min) && cold == 0 && waiting == 0 && utilization < c.scale_down_utilization) {
    Replica* victim = nullptr;
    for (auto& r : replicas_)
      if (r->state == ReplicaState::Up && (!victim || r->outstanding() <= victim->outstanding())) victim = r.get();
    victim->state = ReplicaState::Draining;
    ++out_.scale_downs;
    if (victim->outstanding() == 0 && !victim->busy()) remove(*victim, now);
  }
  push(now + c.autoscale_interval_s, Ev::Autoscale);
}

void Cluster::dispatch(const Event& e) {
  switch (e.type) {
    case Ev::IterDone: return on_iteration_done(e);
    case Ev::ReplicaUp: return on_replica_up(e);
    case Ev::Fail: return on_failure(e);
    case Ev::LinkRestore:
      if (replicas_[e.replica]->generation == e.gen) {
        replicas_[e.replica]->link_fraction = 1.0;
        if (out_.incidents[e.a].what == "link (MTBF)") schedule_link_mtbf(e.replica, e.t);
      }
      out_.incidents[e.a].back_s = e.t;
      return;
    case Ev::Autoscale: return autoscale(e.t);
    case Ev::TransferDone: return on_transfer_done(e);
    case Ev::MtbfFail:
      if (replicas_[e.replica]->generation == e.gen && replicas_[e.replica]->state == ReplicaState::Up)
        lose(e.replica, e.t, "chip (MTBF)", opt_.cluster.repair_s);
      return;
    case Ev::LinkMtbfFail: return on_link_mtbf(e);
  }
}

ServeOutcome Cluster::run() {
  start();
  for (size_t i = 0; i < rec().requests.size() && source_.closed_loop(); ++i) arrive(static_cast<int64_t>(i), 0);
  flush_kicks(0);
  for (uint64_t steps = 0; !finished(); ++steps) {
    const double ta = next_arrival();
    if (heap_.empty() && ta == kNever)
      throw Error(fmt::format("serving run stalled at {:.3f} s with {} requests unfinished (no replica left?)", now_,
                              in_system_));
    if (heap_.empty() || ta <= heap_.top().t) {
      advance(ta);
      arrive(static_cast<int64_t>(next_arrival_++), ta);
    } else {
      const Event e = heap_.top();
      heap_.pop();
      advance(e.t);
      dispatch(e);
    }
    if (!to_kick_.empty() && std::min(next_arrival(), heap_.empty() ? kNever : heap_.top().t) > now_) flush_kicks(now_);
    if (progress_ && (steps & 0xffff) == 0) progress_(now_, rec().completed, total_);
  }
  out_.end_s = now_;
  sample(sampled_bins_);
  out_.replicas_peak = static_cast<int>(replicas_.size());
  for (size_t i = 0; i < replicas_.size(); ++i) {
    out_.replica_seconds += std::min(removed_s_[i], now_) - created_s_[i];
    rec().timeline.spread_held(created_s_[i], std::min(removed_s_[i], now_));
    out_.busy_seconds += replicas_[i]->busy_s;
  }
  // Every replica's chips draw static power for all the time it is held (up, cold, draining).
  rec().energy_by_unit[EnergyUnit::Static] = setup_.cost->idle_power().value() * out_.replica_seconds;
  rec().energy_j = rec().energy_by_unit.total();
  return std::move(out_);
}

}  // namespace

ServeOutcome simulate_serving(const ServeOptions& opt, const ServeSetup& setup, const ServeProgress& progress) {
  if (!setup.cost) throw Error("simulate_serving: no step cost");
  Cluster c(opt, setup, progress);
  return c.run();
}

}  // namespace trnsim::workloads
