#include "trnsim/workloads/offline_throughput.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "trnsim/common/error.h"

namespace trnsim::workloads {

OfflineThroughput offline_throughput(const IStepCost& cost, const OfflineOptions& o) {
  if (o.input_tokens < 1 || o.output_tokens < 1)
    throw ConfigError(fmt::format("offline throughput: input and output tokens must be >= 1 (got {}, {})", o.input_tokens,
                                  o.output_tokens));
  OfflineThroughput r;
  const double free = (cost.hbm_bytes_per_core() - cost.weight_bytes_per_core()).value() * o.kv_memory_fraction;
  const double per_seq = cost.kv_bytes_per_token_per_core().value() * static_cast<double>(o.input_tokens + o.output_tokens);
  const auto by_kv = static_cast<int64_t>(std::floor(free / per_seq));
  const double ratio = static_cast<double>(o.input_tokens) / static_cast<double>(o.output_tokens);
  const auto by_tokens = static_cast<int64_t>(std::floor(static_cast<double>(o.max_num_tokens) / (1 + ratio)));
  r.batch = std::min({by_kv, o.max_batch, std::max<int64_t>(by_tokens, 1)});
  r.limit = r.batch == by_kv ? "kv-memory" : r.batch == o.max_batch ? "max_batch" : "max_num_tokens";
  if (by_kv < 1)
    throw ShapeError(fmt::format("offline throughput: one sequence of {} tokens needs {:.2f} GB of KV cache per core, "
                                 "{:.2f} GB are free", o.input_tokens + o.output_tokens, per_seq / 1e9, free / 1e9));
  // Steady state: batch decodes at the mean context, plus the prompts of batch/out new
  // sequences per iteration, as chunks of whole prompts at their mean context.
  StepBatch b;
  b.decode_contexts.assign(static_cast<size_t>(r.batch), o.input_tokens + o.output_tokens / 2);
  r.prefill_tokens_per_step = static_cast<double>(r.batch) * ratio;
  const double new_seqs = static_cast<double>(r.batch) / static_cast<double>(o.output_tokens);
  const auto chunks = static_cast<int64_t>(std::ceil(new_seqs));
  const auto per_chunk = static_cast<int64_t>(std::llround(r.prefill_tokens_per_step / static_cast<double>(chunks)));
  for (int64_t c = 0; c < chunks && per_chunk > 0; ++c)
    b.prefills.push_back({per_chunk, std::max<int64_t>(0, (o.input_tokens - per_chunk) / 2)});
  r.step = cost.step(b);
  const double t = r.step.time.value() * 1e-9;
  r.output_tokens_per_s = t > 0 ? static_cast<double>(r.batch) / t : 0;
  r.energy_per_output_token_j = r.step.energy.value() / static_cast<double>(r.batch);
  return r;
}

}  // namespace trnsim::workloads
