// vLLM's scheduler (V1, chunked prefill): every iteration first gives each running sequence its
// next token (decode) or next prompt chunk, preempting the most recently admitted sequences when
// the KV cache cannot grow; then, if nothing was preempted, swaps sequences back in and admits
// waiting ones in arrival order while max_seqs, the token budget and the cache allow.
#include <algorithm>

#include "trnsim/workloads/i_batch_scheduler.h"
#include "trnsim/workloads/serve_replica.h"

namespace trnsim::workloads {

class ContinuousScheduler : public IBatchScheduler {
 public:
  bool plan(Replica& r, double now, StepBatch& batch) override {
    batch.prefills.clear();
    batch.decode_contexts.clear();
    r.scheduled_.clear();
    int64_t budget = r.opt_.max_batched_tokens;
    bool preempted = false;
    for (size_t i = 0; i < r.running_.size() && budget > 0;) {
      const int s = r.running_[i];
      if (grow(r, s, budget, now)) {
        add(r, s, batch, budget);
        ++i;
        continue;
      }
      preempted = true;  // s could not grow even after preempting everyone behind it
      r.running_.erase(r.running_.begin() + static_cast<std::ptrdiff_t>(i));
      r.preempt(s, now);
    }
    if (!preempted) admit(r, now, batch, budget);
    return !r.scheduled_.empty();
  }

 private:
  static int32_t tokens_of(const Replica& r, const Seq& q, int64_t budget) {
    const int64_t left = q.prompt - q.done;
    return left > 0 ? static_cast<int32_t>(std::min(left, budget)) : 1;
  }
  // KV tokens the sequence will hold after running `tokens` (a transferred sequence brings its
  // prompt's KV with it).
  static int64_t kv_after(const Seq& q, int32_t tokens) {
    return (q.done == q.prompt && q.kv == 0 ? q.prompt : q.kv) + tokens;
  }
  static int64_t blocks_needed(const Replica& r, const Seq& q, int32_t tokens) {
    return std::max<int64_t>(0, r.kv_.blocks_for(kv_after(q, tokens)) - q.owned - q.shared);
  }

  // Finds the KV blocks for running sequence s's next step, preempting from the back.
  static bool grow(Replica& r, int s, int64_t budget, double now) {
    Seq& q = r.pool_[s];
    const int64_t need = blocks_needed(r, q, tokens_of(r, q, budget));
    while (!r.kv_.allocate(need)) {
      const int victim = r.running_.back();
      if (victim == s) return false;
      r.running_.pop_back();
      r.preempt(victim, now);
    }
    q.owned += need;
    return true;
  }

  static void add(Replica& r, int s, StepBatch& batch, int64_t& budget) {
    Seq& q = r.pool_[s];
    q.chunk = tokens_of(r, q, budget);
    if (q.done == q.prompt && q.kv == 0) q.kv = q.prompt;  // transferred KV now in the cache
    if (q.done < q.prompt)
      batch.prefills.push_back({q.chunk, q.kv});
    else
      batch.decode_contexts.push_back(q.kv);
    budget -= q.chunk;
    r.scheduled_.push_back(s);
  }

  static void admit(Replica& r, double now, StepBatch& batch, int64_t& budget) {
    while (!r.swapped_.empty() && static_cast<int>(r.running_.size()) < r.opt_.max_seqs && budget > 0) {
      const int s = r.swapped_.front();
      Seq& q = r.pool_[s];
      const int64_t need = r.kv_.blocks_for(q.kv + 1);
      if (!r.kv_.allocate(need)) return;
      r.swapped_.pop_front();
      r.swap_blocks_used_ -= r.kv_.blocks_for(q.kv);
      r.swap_bytes_this_step_ += static_cast<double>(r.kv_.blocks_for(q.kv)) * r.kv_block_bytes();
      q.owned = need;
      q.swapped = false;
      r.running_.push_back(s);
      add(r, s, batch, budget);
    }
    if (!r.swapped_.empty()) return;  // swapped sequences go before new ones
    while (!r.waiting_.empty() && static_cast<int>(r.running_.size()) < r.opt_.max_seqs && budget > 0) {
      const int s = r.waiting_.front();
      Seq& q = r.pool_[s];
      const bool fresh = q.done == 0 && q.kv == 0;
      if (fresh && q.group >= 0 && r.opt_.prefix_caching) use_prefix(r, q, now);
      const int64_t left = q.prompt - q.done;
      if (!r.opt_.chunked_prefill && left > budget) return undo_prefix(r, q, now);
      const int64_t need = blocks_needed(r, q, tokens_of(r, q, budget));
      if (!r.kv_.allocate(need)) return undo_prefix(r, q, now);
      q.owned += need;
      r.waiting_.pop_front();
      r.running_.push_back(s);
      RequestRecord& rr = r.rec_.records[q.req];
      if (rr.scheduled_s < 0) rr.scheduled_s = now;
      add(r, s, batch, budget);
    }
  }

  static void use_prefix(Replica& r, Seq& q, double now) {
    const int64_t blocks = r.kv_.acquire_prefix(q.group, now);
    if (!blocks) return;
    q.shared = blocks;
    q.kv = q.done = static_cast<int32_t>(std::min<int64_t>(blocks * r.kv_.block_tokens(), q.prompt - 1));
    r.rec_.prefix_hit_tokens += q.done;
  }
  static void undo_prefix(Replica& r, Seq& q, double now) {
    if (!q.shared) return;
    r.rec_.prefix_hit_tokens -= q.done;
    r.kv_.release_prefix(q.group, now);
    q.shared = 0;
    q.kv = q.done = 0;
  }
};

std::unique_ptr<IBatchScheduler> make_continuous_scheduler() { return std::make_unique<ContinuousScheduler>(); }

}  // namespace trnsim::workloads
