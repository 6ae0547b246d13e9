// Every knob of a serving run, grouped as the run is built: traffic (who sends what when), the
// engine of one replica, the cluster around the replicas, cold starts, failures and SLOs. The
// CLI (`trnsim serve`) and Python (`trnsim.serve`) fill the same struct (serve_options_json.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "trnsim/workloads/traffic_arrivals.h"
#include "trnsim/workloads/traffic_lengths.h"

namespace trnsim::workloads {

struct TrafficOptions {
  ArrivalSpec arrivals;        // open loop (--rate)
  int concurrency = 0;         // closed loop: N clients, each sends when its last request ends
  bool offline = false;        // all requests queued at time 0
  std::string trace;           // Azure-format CSV replayed (cycled if --requests asks for more)
  double trace_speedup = 1.0;  // trace time divided by this
  int64_t requests = 0;        // stop after this many (0: --duration decides)
  double duration_s = 0;       // open loop: arrivals stop at this time
  LengthSpec input{"fixed", 512, 512}, output{"fixed", 128, 128};
  int prefix_groups = 0;       // > 0: requests share one of this many prompt prefixes...
  int prefix_tokens = 0;       // ... of this many tokens (system prompts), for prefix caching
  uint64_t seed = 0;
};

struct EngineOptions {
  std::string batching = "continuous";  // continuous (vLLM) | static (transformers-neuronx)
  int max_seqs = 256;                   // vLLM max_num_seqs; static: the compiled batch size
  int64_t max_batched_tokens = 8192;    // vLLM max_num_batched_tokens (per iteration)
  bool chunked_prefill = true;
  int block_tokens = 16;                // KV-cache page (vLLM's default block size)
  double hbm_utilization = 0.9;         // vLLM gpu_memory_utilization
  int64_t kv_blocks = 0;                // > 0: override the KV-cache size in blocks
  std::string preemption = "recompute";  // recompute | swap
  double swap_bytes = 64e9;             // host memory for swapped-out KV per replica
  double swap_gbps = 32;                // device <-> host bandwidth of one replica (PCIe)
  bool prefix_caching = false;
  std::vector<int64_t> buckets;         // static: sequence-length buckets (default powers of 2)
  int64_t max_context = 0;              // the model's context (max_position_embeddings)
  int64_t activation_bytes_per_core = -1;  // < 0: estimated from the model (serve_memory.h)
};

struct ColdStartOptions {
  double load_gbps = 8;          // weights from storage/host to HBM, per replica
  bool program_cached = true;    // compiled program (NEFF) in the cache: load, not compile
  double program_load_s = 5;
  double compile_s = 600;
  int warmup_iterations = 2;     // one full prefill and one full decode per iteration pair
  bool start_cold = false;       // the first replicas also pay a cold start at time 0
};

struct FailureEvent {
  std::string what;      // replica | chip | link | degrade
  int replica = 0;
  double at_s = 0;
  double fraction = 0.5;  // link / degrade: bandwidth left on the replica's fabric
  double for_s = -1;      // link / degrade: how long (< 0: to the end)
};

struct ClusterOptions {
  int replicas = 1;                  // decode replicas when disaggregated
  std::string router = "least-outstanding";  // round-robin | least-outstanding | kv-aware
  int prefill_replicas = 0;          // > 0: prefill/decode disaggregation
  double kv_transfer_gbps = 0;       // 0: from the system's fabric
  double kv_transfer_latency_s = -1;  // < 0: from the system's fabric
  int autoscale_min = 0, autoscale_max = 0;  // max > 0: autoscaler on
  double autoscale_interval_s = 10;
  double scale_up_queue = 4;         // waiting requests per replica above which one is added
  double scale_down_utilization = 0.3;  // busy fraction below which one is drained
  std::vector<FailureEvent> failures;
  double mtbf_hours = 0;             // > 0: chip failures drawn per chip with this MTBF
  double repair_s = 0;               // a lost chip is replaced after this, then cold start
  double link_mtbf_hours = 0;        // > 0: link failures (half bandwidth) drawn per chip's link
  double link_repair_s = 600;        // a drawn link failure lasts this long
};

struct SloOptions {
  std::string name;  // mlperf-server | mlperf-interactive | custom | "" (none)
  double ttft_s = 0, tpot_s = 0;
};

struct ServeOptions {
  TrafficOptions traffic;
  EngineOptions engine;
  ClusterOptions cluster;
  ColdStartOptions cold;
  SloOptions slo;
  double timeline_bin_s = 1.0;
};

SloOptions parse_slo(const std::string& text);
// "replica@30", "chip:1@30", "link:0@30+60", "degrade:0=0.25@30+60" (seconds).
FailureEvent parse_failure(const std::string& text);

}  // namespace trnsim::workloads
