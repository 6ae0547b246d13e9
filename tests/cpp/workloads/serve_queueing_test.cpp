// The simulator core against closed forms: M/D/1 waiting time, Little's law, the TTFT of a
// lone request, the saturation throughput of a batch configuration, and determinism.
#include <gtest/gtest.h>

#include <cmath>

#include "serve_test_costs.h"

namespace trnsim::workloads {
namespace {

using test::LinearCost;

// Poisson arrivals, one request in service at a time, each exactly one iteration of D seconds:
// an M/D/1 queue, mean wait rho D / (2 (1 - rho)) (Pollaczek-Khinchine). The bound is 4 standard
// errors from 20 batch means.
TEST(ServeQueueing, MD1MeanWaitMatchesPollaczekKhinchine) {
  const double D = 0.01;
  for (double rho : {0.5, 0.8}) {
    LinearCost cost(D, 0, 0);
    ServeOptions o = test::base_options();
    o.traffic.arrivals.rate_qps = rho / D;
    o.traffic.requests = 200000;
    o.traffic.input = {"fixed", 1, 1};
    o.traffic.output = {"fixed", 1, 1};
    o.traffic.seed = 7;
    o.engine.max_seqs = 1;
    const auto out = simulate_serving(o, test::setup_for(cost, 1000));
    const int batches = 20;
    const size_t n = out.rec.records.size(), per = n / batches;
    std::vector<double> means(batches, 0);
    double total = 0;
    for (size_t i = 0; i < per * batches; ++i) {
      const double w = out.rec.records[i].scheduled_s - out.rec.requests[i].arrival_s;
      means[i / per] += w / static_cast<double>(per);
      total += w;
    }
    const double mean = total / static_cast<double>(per * batches);
    double var = 0;
    for (double m : means) var += (m - mean) * (m - mean);
    const double se = std::sqrt(var / (batches - 1) / batches);
    const double expected = rho * D / (2 * (1 - rho));
    EXPECT_NEAR(mean, expected, 4 * se) << "rho " << rho;
    EXPECT_LT(std::abs(mean - expected) / expected, 0.05) << "rho " << rho;
  }
}

TEST(ServeQueueing, LittlesLawHoldsOnEveryRun) {
  LinearCost cost(0.004, 2e-5, 1e-8);
  for (int variant = 0; variant < 4; ++variant) {
    ServeOptions o = test::base_options();
    o.traffic.arrivals.rate_qps = 30;
    o.traffic.requests = 3000;
    o.traffic.input = {"uniform", 50, 800};
    o.traffic.output = {"uniform", 1, 300};
    o.cluster.replicas = 2;
    if (variant == 1) o.traffic.arrivals = {"gamma", 30, 0.3};
    if (variant == 2) o.cluster.failures.push_back(parse_failure("replica:1@20"));
    if (variant == 3) o.engine.batching = "static", o.engine.max_seqs = 8, o.engine.buckets = {256, 512, 1024, 2048};
    const auto out = simulate_serving(o, test::setup_for(cost, 4000));
    const auto j = test::result(out, o);
    EXPECT_EQ(j["requests"], 3000);
    EXPECT_NEAR(j["littles_law_mean_in_system"].get<double>(), j["littles_law_rate_x_latency"].get<double>(),
                1e-9 * j["littles_law_rate_x_latency"].get<double>())
        << "variant " << variant;
  }
}

TEST(ServeQueueing, LoneRequestTtftIsThePrefillTime) {
  LinearCost cost(0.003, 1e-5, 2e-9);
  ServeOptions o = test::base_options();
  o.traffic.arrivals.rate_qps = 0.01;  // one request per 100 s; each takes well under 1 s
  o.traffic.requests = 50;
  o.traffic.input = {"fixed", 1000, 1000};
  o.traffic.output = {"fixed", 20, 20};
  const auto out = simulate_serving(o, test::setup_for(cost, 10000));
  StepBatch prefill;
  prefill.prefills.push_back({1000, 0});
  const double expected = cost.step(prefill).time.value() * 1e-9;
  for (size_t i = 0; i < out.rec.records.size(); ++i)
    EXPECT_NEAR(out.rec.records[i].first_token_s - out.rec.requests[i].arrival_s, expected, 1e-9);
  // And each later token one decode step over its context.
  double decode = 0;
  for (int j = 0; j < 19; ++j) decode += 0.003 + 1e-5 + 2e-9 * (1000 + j);
  EXPECT_NEAR(out.rec.records[0].done_s - out.rec.records[0].first_token_s, decode, 1e-12);
}

// Offline, B sequences of I prompt and O output tokens fit in one batch: the engine alternates
// one prefill of B x I tokens and O - 1 decode steps, so throughput = B O / (T_prefill + sum T_decode).
TEST(ServeQueueing, SaturationThroughputIsTheBatchConfigurationsMaximum) {
  const double a = 0.005, b = 2e-5, c = 1e-8;
  const int B = 16, I = 512, O = 64, k = 5;
  LinearCost cost(a, b, c);
  for (const std::string batching : {"continuous", "static"}) {
    ServeOptions o = test::base_options();
    o.traffic.offline = true;
    o.traffic.requests = B * k;
    o.traffic.input = {"fixed", I, I};
    o.traffic.output = {"fixed", O, O};
    o.engine.batching = batching;
    o.engine.max_seqs = B;
    o.engine.max_batched_tokens = B * I;
    o.engine.buckets = {512, 1024, 2048};
    double batch_time = a + b * B * I;
    for (int j = 1; j < O; ++j) {
      const int context = I + j - 1;
      const int attended = batching == "static" ? (context <= 512 ? 512 : 1024) : context;
      batch_time += a + b * B + c * B * attended;
    }
    const auto out = simulate_serving(o, test::setup_for(cost, 100000));
    const auto j = test::result(out, o);
    EXPECT_NEAR(j["output_token_throughput_tps"].get<double>(), B * O / batch_time, 1e-9 * B * O / batch_time)
        << batching;
  }
}

TEST(ServeQueueing, SameSeedSameResultBitForBit) {
  LinearCost cost(0.004, 2e-5, 1e-8);
  auto run = [&](uint64_t seed) {
    ServeOptions o = test::base_options();
    o.traffic.arrivals = {"gamma", 40, 0.5};
    o.traffic.requests = 2000;
    o.traffic.input = {"uniform", 10, 2000};
    o.traffic.output = {"uniform", 1, 500};
    o.traffic.seed = seed;
    o.cluster.replicas = 3;
    o.cluster.mtbf_hours = 0.01;
    o.cluster.router = "kv-aware";
    const auto out = simulate_serving(o, test::setup_for(cost, 3000));
    return test::result(out, o).dump();
  };
  EXPECT_EQ(run(1), run(1));
  EXPECT_NE(run(1), run(2));
}

}  // namespace
}  // namespace trnsim::workloads
