#include "trnsim/workloads/serve_cold_start.h"

#include <fmt/core.h>

#include <algorithm>

#include "trnsim/common/error.h"

namespace trnsim::workloads {

ColdStartTime cold_start_time(const IStepCost& cost, const ColdStartOptions& c, const EngineOptions& e) {
  if (!(c.load_gbps > 0)) throw ConfigError(fmt::format("--load-gbps {}: expected > 0", c.load_gbps));
  if (c.program_load_s < 0 || c.compile_s < 0 || c.warmup_iterations < 0)
    throw ConfigError("cold start: --program-load-s, --compile-s and --warmup-iterations must be >= 0");
  ColdStartTime t;
  t.weights_s = cost.weight_bytes_per_core().value() * cost.cores() / (c.load_gbps * 1e9);
  t.program_s = c.program_cached ? c.program_load_s : c.compile_s;
  if (c.warmup_iterations > 0) {
    StepBatch prefill, decode;
    const int64_t tokens = std::min<int64_t>(e.max_batched_tokens, e.max_context > 0 ? e.max_context : e.max_batched_tokens);
    prefill.prefills.push_back({tokens, 0});
    decode.decode_contexts.assign(e.max_seqs, e.block_tokens);
    t.warmup_s = c.warmup_iterations * (cost.step(prefill).time.value() + cost.step(decode).time.value()) * 1e-9;
  }
  return t;
}

}  // namespace trnsim::workloads
