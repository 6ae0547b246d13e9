// One replica of a deployment: its queues, its running sequences, its KV cache and its engine
// loop. An iteration is planned by the batch scheduler (i_batch_scheduler.h), timed by the step
// cost for exactly the batch it runs (prefill chunks and decodes with their contexts), and its
// results (tokens, first tokens, completions) are written to the run's recorder when it ends.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "trnsim/workloads/i_step_cost.h"
#include "trnsim/workloads/kv_cache_block_manager.h"
#include "trnsim/workloads/serve_options.h"
#include "trnsim/workloads/serve_recorder.h"

namespace trnsim::workloads {

// A request's life on this replica (one attempt). Token counts of this attempt: after a
// preemption by recompute, `prompt` is the prompt plus the tokens generated so far.
struct Seq {
  int64_t req = -1;
  int32_t prompt = 0;     // tokens to have in the KV cache before decoding
  int32_t done = 0;       // of them, already there
  int32_t generated = 0;  // output tokens produced (the request's, over all attempts)
  int32_t target = 0;     // output tokens wanted
  int64_t kv = 0;         // tokens in the KV cache
  int64_t owned = 0;      // KV blocks this sequence holds alone
  int64_t shared = 0;     // KV blocks of a cached prefix it references
  int32_t chunk = 0;      // tokens scheduled in the current iteration
  int32_t group = -1;     // prefix group
  bool swapped = false;
  double last_token_s = 0;
};

enum class ReplicaRole { Both, Prefill, Decode };
enum class ReplicaState { Cold, Up, Draining, Down, Removed };

// A handed-over request of a disaggregated prefill replica: its KV goes to a decode replica.
struct Handoff {
  int64_t req;
  int64_t kv_tokens;
};

// What an iteration's end tells the cluster.
struct IterationOutput {
  std::vector<Handoff> handoffs;
  std::vector<int64_t> completed;
  void clear() { handoffs.clear(), completed.clear(); }
};

class IBatchScheduler;

class Replica {
 public:
  Replica(int id, ReplicaRole role, const IStepCost& cost, const EngineOptions& opt, int64_t kv_blocks,
          ServeRecorder& rec);
  ~Replica();

  // A request (or a transferred one, already prefilled: `prefilled_kv` > 0) joins the queue.
  void enqueue(int64_t req, int64_t prefilled_kv = 0, int32_t generated = 0);
  // Plans and times the next iteration; false if there is nothing to run.
  bool start_iteration(double now);
  double iteration_end() const { return iteration_end_; }
  // Applies the iteration's results at its end time; disaggregated prefills go to `handoffs`.
  void finish_iteration(double now, IterationOutput& out);
  // The replica is lost: its requests (queued or running) are returned for a retry.
  std::vector<int64_t> evacuate();

  int id() const { return id_; }
  ReplicaRole role() const { return role_; }
  ReplicaState state = ReplicaState::Up;
  double state_since_s = 0;
  uint32_t generation = 0;  // bumped on loss: a stale iteration end is ignored
  double link_fraction = 1.0;  // fabric bandwidth left (degraded/lost link)
  bool busy() const { return busy_; }
  int64_t outstanding() const { return static_cast<int64_t>(waiting_.size() + running_.size() + swapped_.size()); }
  int64_t waiting() const { return static_cast<int64_t>(waiting_.size() + swapped_.size()); }
  int64_t running() const { return static_cast<int64_t>(running_.size()); }
  const KvBlockManager& kv() const { return kv_; }
  double busy_s = 0;  // time spent in iterations

 private:
  friend class ContinuousScheduler;
  friend class StaticScheduler;
  int new_seq();
  void free_seq(int s);
  void preempt(int s, double now);
  void emit_token(Seq& s, double now);
  void finish_seq(int s, double now, IterationOutput& out);
  void publish_prefix(Seq& q, double now);
  double kv_block_bytes() const;

  int id_;
  ReplicaRole role_;
  const IStepCost& cost_;
  const EngineOptions& opt_;
  ServeRecorder& rec_;
  KvBlockManager kv_;
  std::unique_ptr<IBatchScheduler> scheduler_;
  std::vector<Seq> pool_;
  std::vector<int> free_;
  std::deque<int> waiting_, swapped_;
  std::vector<int> running_, scheduled_;
  StepBatch batch_;
  int64_t swap_blocks_used_ = 0, swap_blocks_total_ = 0;
  double swap_bytes_this_step_ = 0;
  double iteration_end_ = 0, iteration_start_ = 0;
  bool busy_ = false;
};

}  // namespace trnsim::workloads
