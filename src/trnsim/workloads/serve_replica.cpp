#include "trnsim/workloads/serve_replica.h"

#include <fmt/core.h>

#include <algorithm>

#include "trnsim/common/error.h"
#include "trnsim/workloads/i_batch_scheduler.h"

namespace trnsim::workloads {

Replica::Replica(int id, ReplicaRole role, const IStepCost& cost, const EngineOptions& opt, int64_t kv_blocks,
                 ServeRecorder& rec)
    : id_(id), role_(role), cost_(cost), opt_(opt), rec_(rec), kv_(kv_blocks, opt.block_tokens, opt.prefix_caching),
      scheduler_(make_batch_scheduler(opt.batching)) {
  const double block_bytes = kv_block_bytes();
  swap_blocks_total_ = block_bytes > 0 ? static_cast<int64_t>(opt.swap_bytes / block_bytes) : 0;
}

Replica::~Replica() = default;

double Replica::kv_block_bytes() const {
  return cost_.kv_bytes_per_token_per_core().value() * cost_.cores() * opt_.block_tokens;
}

int Replica::new_seq() {
  if (free_.empty()) {
    pool_.emplace_back();
    return static_cast<int>(pool_.size() - 1);
  }
  const int s = free_.back();
  free_.pop_back();
  return s;
}

void Replica::free_seq(int s) {
  pool_[s] = Seq{};
  free_.push_back(s);
}

void Replica::enqueue(int64_t req, int64_t prefilled_kv, int32_t generated) {
  const int s = new_seq();
  Seq& q = pool_[s];
  const Request& r = rec_.requests[req];
  q.req = req;
  q.prompt = r.input;
  q.target = r.output;
  q.group = r.prefix_group;
  q.generated = generated;
  if (prefilled_kv > 0) {  // its KV arrives by transfer (blocks at admission); the first token was sent
    q.done = q.prompt;
    q.last_token_s = rec_.records[req].first_token_s;
  }
  waiting_.push_back(s);
}

bool Replica::start_iteration(double now) {
  if (!scheduler_->plan(*this, now, batch_)) return false;
  const StepCost c = cost_.step(batch_);
  double t = c.time.value() * 1e-9;
  if (link_fraction < 1.0) t += c.collective.value() * 1e-9 * (1.0 / link_fraction - 1.0);
  t += swap_bytes_this_step_ / (opt_.swap_gbps * 1e9);
  swap_bytes_this_step_ = 0;
  if (!(t > 0))
    throw Error(fmt::format("step cost: a batch of {} prefills and {} decodes took {} s; expected a positive time",
                            batch_.prefills.size(), batch_.decode_contexts.size(), t));
  // Dynamic energy only: the chips' static power is charged for all the time a replica is held.
  const double dynamic_j = c.energy.value() - c.energy_by_unit[EnergyUnit::Static];
  rec_.energy_by_unit += c.energy_by_unit;
  rec_.energy_by_unit[EnergyUnit::Static] -= c.energy_by_unit[EnergyUnit::Static];
  rec_.timeline.spread_energy(now, now + t, dynamic_j);
  rec_.peak_iteration_power_w = std::max(rec_.peak_iteration_power_w, dynamic_j / t + cost_.idle_power().value());
  iteration_start_ = now;
  iteration_end_ = now + t;
  busy_ = true;
  return true;
}

void Replica::emit_token(Seq& q, double now) {
  RequestRecord& rr = rec_.records[q.req];
  if (rr.first_token_s < 0)
    rr.first_token_s = now;
  else
    rec_.itl.add(now - q.last_token_s);
  ++q.generated;
  q.last_token_s = now;
  ++rec_.timeline.at(now).output_tokens;
}

void Replica::finish_seq(int s, double now, IterationOutput& out) {
  Seq& q = pool_[s];
  out.completed.push_back(q.req);
  RequestRecord& rr = rec_.records[q.req];
  rr.done_s = now;
  rr.replica = id_;
  ++rec_.completed;
  ++rec_.timeline.at(now).completions;
  kv_.release(q.owned);
  if (q.shared) kv_.release_prefix(q.group, now);
  free_seq(s);
}

void Replica::finish_iteration(double now, IterationOutput& out) {
  busy_s += now - iteration_start_;
  busy_ = false;
  ++rec_.iterations;
  for (int s : scheduled_) {
    Seq& q = pool_[s];
    if (q.done < q.prompt) {
      q.done += q.chunk;
      q.kv += q.chunk;
      rec_.timeline.at(now).prompt_tokens += q.chunk;
      if (q.done < q.prompt) continue;
      emit_token(q, now);
      publish_prefix(q, now);
      if (role_ == ReplicaRole::Prefill && q.generated < q.target) {
        out.handoffs.push_back({q.req, q.kv});
        kv_.release(q.owned);
        if (q.shared) kv_.release_prefix(q.group, now);
        free_seq(s);
        continue;
      }
    } else {
      q.kv += 1;
      emit_token(q, now);
    }
    if (q.generated >= q.target) finish_seq(s, now, out);
  }
  std::erase_if(running_, [&](int s) { return pool_[s].req < 0; });
  scheduler_->after(*this, now);
}

void Replica::publish_prefix(Seq& q, double now) {
  if (!opt_.prefix_caching || q.group < 0 || q.shared) return;
  const int64_t blocks = std::min<int64_t>(rec_.requests[q.req].prefix / kv_.block_tokens(), q.owned);
  if (kv_.publish_prefix(q.group, blocks, now)) {
    q.owned -= blocks;
    q.shared = blocks;
  }
}

void Replica::preempt(int s, double now) {
  Seq& q = pool_[s];
  ++rec_.preemptions;
  ++rec_.records[q.req].preemptions;
  ++rec_.timeline.at(now).preemptions;
  const int64_t blocks = kv_.blocks_for(q.kv);
  kv_.release(q.owned);
  if (q.shared) kv_.release_prefix(q.group, now);
  q.owned = q.shared = 0;
  // Swap keeps a decoding sequence's KV in host memory; one caught mid-prompt recomputes.
  if (opt_.preemption == "swap" && q.done == q.prompt && q.kv > 0 && swap_blocks_used_ + blocks <= swap_blocks_total_) {
    swap_blocks_used_ += blocks;
    swap_bytes_this_step_ += blocks * kv_block_bytes();
    q.swapped = true;
    ++rec_.swaps;
    swapped_.push_back(s);
    return;
  }
  // Recompute: the prompt and the tokens generated so far are prefilled again.
  q.prompt = rec_.requests[q.req].input + q.generated;
  q.done = 0;
  q.kv = 0;
  waiting_.push_front(s);
}

std::vector<int64_t> Replica::evacuate() {
  std::vector<int64_t> out;
  for (int s : running_) out.push_back(pool_[s].req);
  for (int s : swapped_) out.push_back(pool_[s].req);
  for (int s : waiting_) out.push_back(pool_[s].req);
  running_.clear(), swapped_.clear(), waiting_.clear(), scheduled_.clear();
  pool_.clear(), free_.clear();
  kv_.clear();
  swap_blocks_used_ = 0;
  swap_bytes_this_step_ = 0;
  busy_ = false;
  scheduler_ = make_batch_scheduler(opt_.batching);
  return out;
}

}  // namespace trnsim::workloads
