// Static batching as transformers-neuronx runs it: the program is compiled for a batch size
// and for sequence-length buckets, so a batch of up to max_seqs waiting requests is padded to
// the compiled batch size and its prompts to the smallest bucket that holds the longest one,
// and it runs until its longest output is done: no request joins or leaves the hardware batch
// midway (those that finish early wait in their padded slot). Decode steps attend over the
// bucket of the current position.
#include <algorithm>

#include "trnsim/workloads/i_batch_scheduler.h"
#include "trnsim/workloads/serve_replica.h"

namespace trnsim::workloads {

int64_t bucket_for(const std::vector<int64_t>& buckets, int64_t tokens) {
  for (int64_t b : buckets)
    if (b >= tokens) return b;
  return tokens;  // past the largest bucket: validated against before the run
}

class StaticScheduler : public IBatchScheduler {
 public:
  bool plan(Replica& r, double now, StepBatch& batch) override {
    batch.prefills.clear();
    batch.decode_contexts.clear();
    r.scheduled_.clear();
    if (r.running_.empty()) return start_batch(r, now, batch);
    const int64_t context = bucket_for(r.opt_.buckets, prompt_bucket_ + step_++);
    batch.decode_contexts.assign(r.opt_.max_seqs, context);
    for (int s : r.running_) {
      r.pool_[s].chunk = 1;
      r.scheduled_.push_back(s);
    }
    return true;
  }

 private:
  bool start_batch(Replica& r, double now, StepBatch& batch) {
    int64_t longest = 0;
    while (!r.waiting_.empty() && static_cast<int>(r.running_.size()) < r.opt_.max_seqs) {
      const int s = r.waiting_.front();
      Seq& q = r.pool_[s];
      // Each slot holds its whole sequence: blocks for prompt and output up front.
      const int64_t need = r.kv_.blocks_for(q.prompt + q.target);
      if (!r.kv_.allocate(need)) break;
      q.owned = need;
      q.chunk = q.prompt - q.done;
      r.waiting_.pop_front();
      r.running_.push_back(s);
      r.scheduled_.push_back(s);
      RequestRecord& rr = r.rec_.records[q.req];
      if (rr.scheduled_s < 0) rr.scheduled_s = now;
      longest = std::max<int64_t>(longest, q.prompt);
    }
    if (r.running_.empty()) return false;
    prompt_bucket_ = bucket_for(r.opt_.buckets, longest);
    step_ = 0;
    batch.prefills.assign(r.opt_.max_seqs, PrefillChunk{prompt_bucket_, 0});
    return true;
  }

  int64_t prompt_bucket_ = 0, step_ = 0;
};

std::unique_ptr<IBatchScheduler> make_static_scheduler() { return std::make_unique<StaticScheduler>(); }

}  // namespace trnsim::workloads
