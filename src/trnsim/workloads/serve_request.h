// A request of a serving run and what happened to it. Requests live in one array indexed by id;
// replicas hold only ids, so a request that is retried after a failure is still one record and
// is counted once.
#pragma once
#include <cstdint>
#include <vector>

namespace trnsim::workloads {

struct Request {
  double arrival_s = 0;     // when the client sent it (open loop: from the arrival process)
  int32_t input = 0;        // prompt tokens
  int32_t output = 0;       // tokens to generate (>= 1)
  int32_t prefix_group = -1;  // requests of a group share their first `prefix` prompt tokens
  int32_t prefix = 0;
};

// Timestamps of one request; -1 while not reached. A retry (after a failure) clears the
// first-token time: the stream the client saw broke, so its TTFT is that of the attempt that
// completed, measured from the original arrival.
struct RequestRecord {
  double scheduled_s = -1;    // first time a replica put it in a batch (queueing delay ends)
  double first_token_s = -1;
  double done_s = -1;
  double transfer_s = 0;      // disaggregated: KV transfer time, prefill to decode replica
  int32_t retries = 0;        // times re-queued after its replica was lost
  int32_t preemptions = 0;
  int32_t replica = -1;       // the replica that completed it (decode replica if disaggregated)
};

}  // namespace trnsim::workloads
