// Matmuls of one row tile (an encoder at batch 1): the epilogue's row-broadcast operands are
// read from HBM once, not once per partition, and the whole weight is resident so that every
// block can load ahead. References: a plain C++ loop for the values, closed forms for the bytes.
#include <gtest/gtest.h>

#include <variant>

#include "one_node_model.h"

namespace trnsim::runtime {
namespace {

using testing::LinearLn;
using testing::OnnxModel;
using testing::values;

// MatMul + bias + LayerNorm(scale, shift): three row-broadcast operands in the epilogue.
// HBM bytes in closed form: A, the weight and the output once each, and each of the three
// [N] rows once (read per partition they were 128 x N x 4 bytes each).
TEST(MatmulOneTile, BroadcastRowsAreReadOnceAndValuesMatchALoop) {
  const LinearLn lin{128, 256, 1024, false, 21};
  const auto a = values(size_t(lin.m) * lin.k, 25);
  const auto out = testing::run_one_core(lin.model(), hw::load_chip("trn1"), {{"a", a}});
  const auto& got = out.outputs.at("y");
  ASSERT_EQ(got.size(), size_t(lin.m) * lin.n);
  for (int r = 0; r < lin.m; ++r) {
    const auto want = lin.want(r, a, {}, testing::exact);
    for (int c = 0; c < lin.n; ++c) ASSERT_NEAR(got[size_t(r) * lin.n + c], want[c], 1e-4 + 1e-4 * std::fabs(want[c])) << r << "," << c;
  }
  const double bytes = 4.0 * (double(lin.m) * lin.k + double(lin.k) * lin.n + double(lin.m) * lin.n + 3.0 * lin.n);
  EXPECT_DOUBLE_EQ(out.report.hbm_bytes, bytes);
}

// BERT-base's FFN-in at batch 1 (128 x 768 x 3072, bf16): the weight fits the kernel's half of
// SBUF, so it is held whole: every byte of it is loaded exactly once and no weight load waits
// for a slot that a matmul of the same kernel must free first (a ring of two blocks made the
// third block's loads wait, so only a third of the weight could load under earlier nodes).
TEST(MatmulOneTile, WholeWeightIsResidentSoNoWeightLoadWaitsInTheKernel) {
  const int M = 128, K = 768, N = 3072;
  OnnxModel m;
  m.input("a", {M, K});
  m.floats("w", {K, N}, values(K * N, 31)).floats("bias", {N}, values(N, 32));
  m.node("MatMul", {"a", "w"}, {"mm"});
  m.node("Add", {"mm", "bias"}, {"y"});
  m.output("y");
  auto cm = testing::compile_one_core(m, hw::load_chip("trn1"), compiler::DTypePolicy::BF16, true);
  int64_t weight_bytes = 0, weight_loads = 0, waiting = 0;
  for (const auto& seg : cm.segments) {
    const int wi = seg.program.tensor_index("w");
    if (seg.kind != compiler::Segment::Kind::Kernel || wi < 0) continue;
    for (const auto& core : seg.program.cores)
      for (const auto& q : core.dma_queues)
        for (const auto& ins : q)
          if (const auto* d = std::get_if<isa::Dma>(&ins.op); d && d->src.space == isa::Space::HBM && d->src.tensor == uint32_t(wi)) {
            weight_bytes += d->dst.bytes();
            ++weight_loads;
            waiting += ins.sync.num_waits > 0;
          }
  }
  EXPECT_GT(weight_loads, 0);
  EXPECT_EQ(weight_bytes, int64_t(K) * N * 2);
  EXPECT_EQ(waiting, 0);
}

// RoBERTa-large's FFN-out at batch 1 (128 x 4096 x 1024, bf16, bias + residual + LayerNorm):
// with one row tile there is no next A^T to build ahead, so the one A^T fits the budget and A
// is read from HBM once; holding room for two made it re-load A for every column block.
// Closed form of the HBM bytes: A, weight, residual, output once, three [N] rows once.
TEST(MatmulOneTile, DeepKReadsAOnceAtOneRowTile) {
  const LinearLn lin{128, 4096, 1024, true, 41};
  const auto a = values(size_t(lin.m) * lin.k, 45), res = values(size_t(lin.m) * lin.n, 46);
  const auto out = testing::run_one_core(lin.model(), hw::load_chip("trn1"), {{"a", a}, {"res", res}}, compiler::DTypePolicy::BF16);
  const double bytes = 4.0 * lin.m * lin.k + 2.0 * lin.k * lin.n + 4.0 * 2 * lin.m * lin.n + 4.0 * 3 * lin.n;
  EXPECT_DOUBLE_EQ(out.report.hbm_bytes, bytes);
  // Values: the loop with the matmul operands rounded to bf16 (the policy), every 17th row.
  const auto& got = out.outputs.at("y");
  for (int r = 0; r < lin.m; r += 17) {
    const auto want = lin.want(r, a, res, testing::bf16);
    for (int c = 0; c < lin.n; ++c) ASSERT_NEAR(got[size_t(r) * lin.n + c], want[c], 1e-3 + 1e-3 * std::fabs(want[c])) << r << "," << c;
  }
}

}  // namespace
}  // namespace trnsim::runtime
