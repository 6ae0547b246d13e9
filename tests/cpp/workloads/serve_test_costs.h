// Step costs with closed forms for the serving tests: the simulator's results can then be
// compared with queueing theory and hand-computed schedules.
#pragma once
#include "trnsim/workloads/i_step_cost.h"
#include "trnsim/workloads/serve_cluster.h"
#include "trnsim/workloads/serve_report.h"

namespace trnsim::workloads::test {

// time = a + b x (tokens in the batch) + c x (sum of the contexts attended over), seconds.
class LinearCost : public IStepCost {
 public:
  LinearCost(double a, double b, double c, double collective_fraction = 0) : a_(a), b_(b), c_(c), coll_(collective_fraction) {}
  StepCost step(const StepBatch& batch) const override {
    double tokens = static_cast<double>(batch.decode_contexts.size()), context = 0;
    for (const auto& p : batch.prefills) tokens += static_cast<double>(p.tokens), context += static_cast<double>(p.context);
    for (int64_t c : batch.decode_contexts) context += static_cast<double>(c);
    StepCost s;
    s.time = Nanoseconds((a_ + b_ * tokens + c_ * context) * 1e9);
    s.collective = s.time * coll_;
    s.other = s.time - s.collective;
    s.energy = Joules(s.time.value() * 1e-9 * 500);  // 500 W
    return s;
  }
  Bytes weight_bytes_per_core() const override { return Bytes(10e9); }
  Bytes kv_bytes_per_token_per_core() const override { return Bytes(kv_per_token); }
  Bytes hbm_bytes_per_core() const override { return Bytes(24e9); }
  int cores() const override { return 2; }
  int chips() const override { return 1; }
  double kv_per_token = 64 * 1024;

 private:
  double a_, b_, c_, coll_;
};

inline ServeOptions base_options() {
  ServeOptions o;
  o.engine.max_context = 1 << 20;
  return o;
}

inline ServeSetup setup_for(const IStepCost& cost, int64_t kv_blocks) {
  ServeSetup s;
  s.cost = &cost;
  s.kv_blocks = kv_blocks;
  s.max_context = 1 << 20;
  s.kv_transfer_gbps = 50;
  s.kv_transfer_latency_s = 1e-5;
  return s;
}

inline nlohmann::json result(const ServeOutcome& out, const ServeOptions& o) {
  ServeContext ctx;
  ctx.model = "test";
  return serve_result_json(out, o, ctx);
}

}  // namespace trnsim::workloads::test
