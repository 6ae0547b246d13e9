// Pipeline schedules executed by dependency against the closed forms of their bubbles
// (Narayanan et al. 2021: 1F1B (p-1)/(m+p-1); interleaved with v chunks (p-1)/(vm+p-1)).
#include <gtest/gtest.h>

#include "trnsim/common/error.h"

#include "trnsim/workloads/pipeline_schedule.h"

namespace trnsim::workloads {
namespace {

TEST(PipelineSchedule, OneFOneBBubbleMatchesClosedForm) {
  for (int p : {2, 4, 8}) {
    for (int64_t m : {1, 4, 8, 32}) {
      const std::vector<double> f(p, 1.0), b(p, 2.0);
      const PipelineTiming t = time_pipeline(PipelineSchedule::OneFOneB, m, 1, f, b, 0.0);
      const double closed = double(p - 1) / double(m + p - 1);
      EXPECT_NEAR(t.bubble_fraction, closed, 1e-12) << "p=" << p << " m=" << m;
      EXPECT_NEAR(t.makespan_ns, (m + p - 1) * 3.0, 1e-9);
      EXPECT_DOUBLE_EQ(bubble_fraction_closed_form(PipelineSchedule::OneFOneB, p, m, 1), closed);
      // 1F1B holds at most p - r micro-batches on rank r (GPipe holds all m).
      for (int r = 0; r < p; ++r) EXPECT_EQ(t.peak_in_flight[r], std::min<int64_t>(p - r, m));
    }
  }
}

TEST(PipelineSchedule, GPipeSameBubbleButHoldsEveryMicroBatch) {
  const int p = 4;
  const int64_t m = 8;
  const std::vector<double> f(p, 1.0), b(p, 2.0);
  const PipelineTiming t = time_pipeline(PipelineSchedule::GPipe, m, 1, f, b, 0.0);
  EXPECT_NEAR(t.bubble_fraction, 3.0 / 11.0, 1e-12);
  for (int r = 0; r < p; ++r) EXPECT_EQ(t.peak_in_flight[r], m);
}

TEST(PipelineSchedule, InterleavedBubbleShrinksByV) {
  for (int p : {2, 4}) {
    for (int v : {2, 4}) {
      for (int64_t m : {int64_t(p), int64_t(2 * p), int64_t(4 * p)}) {
        // Chunk passes take 1/v of a whole stage's pass.
        const std::vector<double> f(p, 1.0 / v), b(p, 2.0 / v);
        const PipelineTiming t = time_pipeline(PipelineSchedule::Interleaved, m, v, f, b, 0.0);
        EXPECT_NEAR(t.bubble_fraction, double(p - 1) / (double(v) * m + p - 1), 1e-9)
            << "p=" << p << " v=" << v << " m=" << m;
      }
    }
  }
}

TEST(PipelineSchedule, SendTimeAddsToTheFillAndDrain) {
  // One micro-batch through p stages: p forwards, p backwards and 2(p-1) sends in series.
  const int p = 4;
  const std::vector<double> f(p, 1.0), b(p, 2.0);
  const PipelineTiming t = time_pipeline(PipelineSchedule::OneFOneB, 1, 1, f, b, 0.5);
  EXPECT_NEAR(t.makespan_ns, p * 3.0 + 2 * (p - 1) * 0.5, 1e-9);
}

TEST(PipelineSchedule, InterleavedNeedsMicroBatchesDivisibleByStages) {
  EXPECT_THROW(pipeline_order(PipelineSchedule::Interleaved, 4, 6, 2), ConfigError);
}

}  // namespace
}  // namespace trnsim::workloads
