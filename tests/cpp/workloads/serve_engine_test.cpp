// The engine and the cluster: preemption (recompute and swap) and prefix caching against hand
// counts, disaggregation's TTFT and transfer against the cost's closed form, failures (every
// request completed exactly once), the autoscaler and cold starts.
#include <gtest/gtest.h>

#include <cmath>

#include "serve_test_costs.h"
#include "trnsim/common/error.h"
#include "trnsim/workloads/kv_cache_block_manager.h"
#include "trnsim/workloads/serve_cold_start.h"
#include "trnsim/workloads/serve_memory.h"

namespace trnsim::workloads {
namespace {

using test::LinearCost;

ServeOptions poisson(double rate, int64_t n, LengthSpec in, LengthSpec out) {
  ServeOptions o = test::base_options();
  o.traffic.arrivals.rate_qps = rate;
  o.traffic.requests = n;
  o.traffic.input = in;
  o.traffic.output = out;
  return o;
}

void expect_each_completed_once(const ServeOutcome& out) {
  int64_t timeline_completions = 0;
  for (const auto& b : out.rec.timeline.bins()) timeline_completions += b.completions;
  EXPECT_EQ(out.rec.completed, static_cast<int64_t>(out.rec.records.size()));
  EXPECT_EQ(timeline_completions, out.rec.completed);
  for (size_t i = 0; i < out.rec.records.size(); ++i) {
    const auto& r = out.rec.records[i];
    ASSERT_GE(r.done_s, out.rec.requests[i].arrival_s) << "request " << i;
    ASSERT_GE(r.first_token_s, out.rec.requests[i].arrival_s) << "request " << i;
    ASSERT_LE(r.first_token_s, r.done_s) << "request " << i;
  }
}

TEST(KvBlockManager, PrefixBlocksAreSharedCachedAndEvictedLeastRecentlyUsedFirst) {
  KvBlockManager kv(10, 16, true);
  ASSERT_TRUE(kv.allocate(4));
  ASSERT_TRUE(kv.publish_prefix(7, 3, 1.0));  // 3 of the 4 become group 7's cached prefix
  EXPECT_EQ(kv.in_use(), 4);
  EXPECT_EQ(kv.acquire_prefix(7, 2.0), 3);
  kv.release_prefix(7, 3.0);
  kv.release_prefix(7, 3.0);
  kv.release(1);
  EXPECT_EQ(kv.in_use(), 0);        // cached, unreferenced
  EXPECT_EQ(kv.free_now(), 7);
  EXPECT_TRUE(kv.allocate(9));      // evicts the prefix
  EXPECT_EQ(kv.cached_prefix_blocks(7), 0);
  EXPECT_FALSE(kv.allocate(2));
}

TEST(ServeEngine, SmallKvCachePreemptsAndStillCompletesEveryRequest) {
  LinearCost cost(0.004, 2e-5, 1e-8);
  for (const std::string mode : {"recompute", "swap"}) {
    ServeOptions o = poisson(50, 600, {"fixed", 400, 400}, {"uniform", 100, 400});
    o.engine.preemption = mode;
    o.engine.max_seqs = 64;
    const auto out = simulate_serving(o, test::setup_for(cost, 120));  // 1920 tokens: ~3 sequences
    EXPECT_GT(out.rec.preemptions, 0) << mode;
    if (mode == "swap") EXPECT_GT(out.rec.swaps, 0);
    expect_each_completed_once(out);
  }
}

TEST(ServeEngine, PrefixCachingSkipsTheCachedPrefix) {
  LinearCost cost(0.004, 2e-5, 0);
  ServeOptions o = poisson(0.01, 20, {"fixed", 1000, 1000}, {"fixed", 2, 2});
  o.traffic.prefix_groups = 1;
  o.traffic.prefix_tokens = 800;  // 50 blocks of 16
  o.engine.prefix_caching = true;
  const auto out = simulate_serving(o, test::setup_for(cost, 10000));
  // The first request prefills 1000 tokens; every later one 1000 - 800.
  EXPECT_NEAR(out.rec.records[0].first_token_s - out.rec.requests[0].arrival_s, 0.004 + 2e-5 * 1000, 1e-9);
  for (size_t i = 1; i < out.rec.records.size(); ++i)
    EXPECT_NEAR(out.rec.records[i].first_token_s - out.rec.requests[i].arrival_s, 0.004 + 2e-5 * 200, 1e-9);
  EXPECT_EQ(out.rec.prefix_hit_tokens, 19 * 800);
}

TEST(ServeEngine, ChunkedPrefillSplitsLongPromptsByTheTokenBudget) {
  LinearCost cost(0.004, 2e-5, 1e-8);
  ServeOptions o = poisson(0.01, 5, {"fixed", 5000, 5000}, {"fixed", 1, 1});
  o.engine.max_batched_tokens = 2048;  // 2048 + 2048 + 904, each chunk over the KV before it
  const auto out = simulate_serving(o, test::setup_for(cost, 10000));
  const double expected = 3 * 0.004 + 2e-5 * 5000 + 1e-8 * (2048 + 4096);
  EXPECT_NEAR(out.rec.records[0].first_token_s - out.rec.requests[0].arrival_s, expected, 1e-9);
}

TEST(ServeCluster, DisaggregatedTtftIsThePrefillAndDecodeWaitsForTheKvTransfer) {
  LinearCost cost(0.004, 2e-5, 1e-8);
  ServeOptions o = poisson(0.01, 10, {"fixed", 1000, 1000}, {"fixed", 3, 3});
  o.cluster.prefill_replicas = 1;
  o.cluster.replicas = 1;
  auto setup = test::setup_for(cost, 10000);
  const auto out = simulate_serving(o, setup);
  const double prefill = 0.004 + 2e-5 * 1000;
  const double transfer = 1000 * cost.kv_per_token * cost.cores() / (setup.kv_transfer_gbps * 1e9) + setup.kv_transfer_latency_s;
  const double decodes = (0.004 + 2e-5 + 1e-8 * 1000) + (0.004 + 2e-5 + 1e-8 * 1001);
  for (size_t i = 0; i < out.rec.records.size(); ++i) {
    const auto& r = out.rec.records[i];
    EXPECT_NEAR(r.first_token_s - out.rec.requests[i].arrival_s, prefill, 1e-9);
    EXPECT_NEAR(r.done_s - out.rec.requests[i].arrival_s, prefill + transfer + decodes, 1e-9);
    EXPECT_EQ(r.replica, 1);  // the decode replica
  }
  // The first decoded token comes a transfer and a decode step after the first token.
  EXPECT_NEAR(out.rec.itl.max(), transfer + 0.004 + 2e-5 + 1e-8 * 1000, 1e-9);
}

TEST(ServeCluster, LostReplicaRequestsAreRetriedAndEachCompletedOnce) {
  LinearCost cost(0.004, 2e-5, 1e-8);
  ServeOptions o = poisson(40, 4000, {"uniform", 100, 1000}, {"uniform", 10, 300});
  o.cluster.replicas = 4;
  o.cluster.failures = {parse_failure("replica:1@30"), parse_failure("chip:2@50"), parse_failure("degrade:3=0.25@10+20")};
  o.cluster.repair_s = 5;
  o.slo = parse_slo("mlperf-server");
  auto setup = test::setup_for(cost, 5000);
  setup.cold = ColdStartTime{4, 5, 1};
  const auto out = simulate_serving(o, setup);
  expect_each_completed_once(out);
  EXPECT_GT(out.rec.retries, 0);
  ASSERT_EQ(out.incidents.size(), 3u);
  int64_t retried = 0;
  for (const auto& i : out.incidents) retried += i.retried;
  EXPECT_EQ(retried, out.rec.retries);
  EXPECT_DOUBLE_EQ(out.incidents[1].back_s, 30 + 10.0);      // replica: cold start
  EXPECT_DOUBLE_EQ(out.incidents[2].back_s, 50 + 5 + 10.0);  // chip: repair, then cold start
  EXPECT_DOUBLE_EQ(out.incidents[0].back_s, 30.0);           // degraded link restored
  const auto j = test::result(out, o);
  EXPECT_EQ(j["incidents"].size(), 3u);
  EXPECT_NEAR(j["littles_law_mean_in_system"].get<double>(), j["littles_law_rate_x_latency"].get<double>(), 1e-9 * j["littles_law_rate_x_latency"].get<double>());
}

TEST(ServeCluster, LinkFailuresDrawnFromAnMtbfFollowTheRenewalRateAndLoseNothing) {
  LinearCost cost(0.004, 2e-5, 1e-8, 0.5);
  auto run = [&](uint64_t seed) {
    ServeOptions o = poisson(40, 4000, {"uniform", 100, 1000}, {"uniform", 10, 300});
    o.traffic.seed = seed;
    o.cluster.replicas = 4;
    o.cluster.link_mtbf_hours = 0.002;  // 7.2 s per chip (1 chip per replica)
    o.cluster.link_repair_s = 2.8;
    return simulate_serving(o, test::setup_for(cost, 5000));
  };
  const auto out = run(3);
  expect_each_completed_once(out);
  EXPECT_EQ(out.rec.retries, 0);  // a degraded link slows a replica; it loses no request
  // Renewal process per replica: up ~ Exp(mean 7.2 s), then 2.8 s down; count ~ T / 10 s each,
  // variance T sigma^2 / mu^3 per replica. Bound: 5 standard deviations.
  const double T = out.end_s, mean = 4 * T / 10.0, sd = std::sqrt(4 * T * 7.2 * 7.2 / 1000.0);
  EXPECT_NEAR(static_cast<double>(out.incidents.size()), mean, 5 * sd);
  for (const auto& i : out.incidents) {
    EXPECT_EQ(i.what, "link (MTBF)");
    if (i.back_s >= 0) EXPECT_NEAR(i.back_s - i.at_s, 2.8, 1e-9);
  }
  // The same seed gives the same run bit for bit; another seed, another one.
  const ServeOptions o = poisson(40, 4000, {"uniform", 100, 1000}, {"uniform", 10, 300});
  EXPECT_EQ(test::result(run(3), o).dump(), test::result(out, o).dump());
  EXPECT_NE(test::result(run(4), o).dump(), test::result(out, o).dump());
}

TEST(ServeCluster, DegradedLinkStretchesTheCollectivePartOfEachStep) {
  LinearCost cost(0.01, 0, 0, 0.5);  // half of every step is collectives
  ServeOptions o = poisson(0.01, 4, {"fixed", 10, 10}, {"fixed", 1, 1});
  o.cluster.failures = {parse_failure("degrade:0=0.25@0")};
  const auto out = simulate_serving(o, test::setup_for(cost, 100));
  // 0.005 compute + 0.005 collectives at a quarter of the bandwidth = 0.025 s.
  EXPECT_NEAR(out.rec.records[0].first_token_s - out.rec.requests[0].arrival_s, 0.025, 1e-12);
}

TEST(ServeCluster, ColdStartDelaysTheFirstRequests) {
  LinearCost cost(0.004, 2e-5, 0);
  ServeOptions o = test::base_options();
  o.traffic.offline = true;
  o.traffic.requests = 1;
  o.traffic.input = {"fixed", 100, 100};
  o.traffic.output = {"fixed", 1, 1};
  o.cold.start_cold = true;
  o.cold.load_gbps = 10;
  o.cold.program_load_s = 3;
  o.cold.warmup_iterations = 1;
  o.engine.max_batched_tokens = 1000;
  o.engine.max_seqs = 4;
  auto setup = test::setup_for(cost, 1000);
  setup.cold = cold_start_time(cost, o.cold, o.engine);
  // 10 GB x 2 cores at 10 GB/s, 3 s of program load, a 1000-token prefill and a 4-sequence decode.
  EXPECT_NEAR(setup.cold.total_s(), 2.0 + 3.0 + (0.004 + 2e-5 * 1000) + (0.004 + 2e-5 * 4), 1e-12);
  const auto out = simulate_serving(o, setup);
  EXPECT_NEAR(out.rec.records[0].first_token_s, setup.cold.total_s() + 0.004 + 2e-5 * 100, 1e-9);
}

TEST(ServeCluster, AutoscalerAddsReplicasUnderABurstAndDrainsThemAfter) {
  LinearCost cost(0.004, 2e-5, 1e-8);
  ServeOptions o = test::base_options();
  o.traffic.arrivals = {"onoff", 60, 1.0, 30, 120};
  o.traffic.duration_s = 600;
  o.traffic.input = {"fixed", 1000, 1000};
  o.traffic.output = {"fixed", 200, 200};
  o.engine.max_seqs = 16;
  o.cluster.replicas = 1;
  o.cluster.autoscale_min = 1;
  o.cluster.autoscale_max = 6;
  auto setup = test::setup_for(cost, 20000);
  setup.cold = ColdStartTime{5, 2, 1};
  const auto out = simulate_serving(o, setup);
  expect_each_completed_once(out);
  EXPECT_GT(out.scale_ups, 0);
  EXPECT_GT(out.scale_downs, 0);
  EXPECT_GT(out.replicas_peak, 1);
}

TEST(ServeMemory, KvCacheIsHbmMinusWeightsAndActivationsAndAnOversizedDeploymentIsAnError) {
  LinearCost cost(0.004, 0, 0);
  EngineOptions e;
  const auto s = size_kv_cache(cost, e, 1e9);
  // (24 GB x 0.9 - 10 GB - 1 GB) / (64 KiB x 16 tokens)
  EXPECT_EQ(s.blocks, static_cast<int64_t>((24e9 * 0.9 - 10e9 - 1e9) / (65536.0 * 16)));
  EXPECT_THROW(size_kv_cache(cost, e, 12e9), ShapeError);
  ServeOptions o = poisson(1, 3, {"fixed", 1000, 1000}, {"fixed", 100, 100});
  EXPECT_THROW(simulate_serving(o, test::setup_for(cost, 10)), ShapeError);  // 160 tokens of KV
}

}  // namespace
}  // namespace trnsim::workloads
