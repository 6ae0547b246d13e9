// The quantize / sparsify passes (issue 11 items 4-5): 4:16 pruning pattern, the packed
// constants of a saved program, and the sparse matmul's TensorE time against the published
// sparse speed-up.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "onnx_model.h"
#include "trnsim/common/error.h"
#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/const_codec.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/compiler/quant_values.h"
#include "trnsim/core/tensor_engine.h"
#include "trnsim/hw/spec_loader.h"

namespace trnsim::compiler {
namespace {

std::vector<double> gaussian(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d;
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

TEST(Sparsify, KeepsTheFourLargestOfEverySixteenDownK) {
  const int64_t k = 64, n = 10;
  const auto w = gaussian(static_cast<size_t>(k * n), 3);
  const auto p = prune_4_16(w, k, n);
  for (int64_t c = 0; c < n; ++c)
    for (int64_t g = 0; g < k; g += 16) {
      std::vector<double> mags;
      for (int64_t i = g; i < g + 16; ++i) mags.push_back(std::fabs(w[static_cast<size_t>(i * n + c)]));
      std::vector<double> sorted = mags;
      std::sort(sorted.rbegin(), sorted.rend());
      int kept = 0;
      for (int64_t i = g; i < g + 16; ++i) {
        const size_t at = static_cast<size_t>(i * n + c);
        if (p[at] != 0) {
          ++kept;
          EXPECT_EQ(p[at], w[at]);                        // kept values unchanged
          EXPECT_GE(std::fabs(w[at]), sorted[3]);         // among the four largest
        }
      }
      EXPECT_EQ(kept, 4) << "column " << c << " group " << g;
    }
  EXPECT_THROW(prune_4_16(w, 40, 16), ShapeError);
}

TEST(Quantize, Int8CodesAndScalesAreNumpysSymmetricRule) {
  const std::vector<double> w = {0.5, -1.0, 0.25, 2.0, -0.125, 0.0};  // 2 x 3
  const QuantValues q = quantize_scaled(w, 2, 3, ElemType::Int8, 1);  // per column
  ASSERT_EQ(q.scales.size(), 3u);
  EXPECT_FLOAT_EQ(q.scales[0], 2.0f / 127);
  EXPECT_EQ(q.codes[3], 127);                                 // the column's max maps to 127
  EXPECT_EQ(q.codes[0], std::nearbyint(0.5 / (2.0f / 127.0)));
  EXPECT_EQ(q.scales[2], 0.25f / 127.0f);
  EXPECT_FALSE(std::signbit(q.codes[5]));                     // no -0 codes
}

TEST(Quantize, PackedConstantsRoundTripExactly) {
  for (ElemType t : {ElemType::Int8, ElemType::Float16, ElemType::BFloat16, ElemType::Float8E4M3FN, ElemType::Float4E2M1, ElemType::Float8E8M0}) {
    std::vector<double> v;
    if (t == ElemType::Int8) v = {-127, -1, 0, 5, 127};
    else if (t == ElemType::Float4E2M1) v = {-6, -0.5, 0, 1.5, 3, 6, 4};
    else if (t == ElemType::Float8E8M0) v = {1.0 / 1024, 0.5, 1, 2, 65536};
    else v = {-448, -0.5, 0, 1.25, 3.5, 256};
    const ConstData packed = ConstData::packed(t, v, 0);
    ASSERT_TRUE(packed.is_encoded()) << elem_name(t);
    EXPECT_EQ(packed.bytes().size(), static_cast<size_t>(encoded_bytes(t, static_cast<int64_t>(v.size()))));
    EXPECT_EQ(packed.values(), v) << elem_name(t);
  }
  EXPECT_FALSE(pack_narrow({0.3}, ElemType::Int8).has_value());  // off the grid: kept wide
}

TEST(Sparsify, SparseMatmulsRunAtThePublishedSparseRate) {
  testing::OnnxModel m;
  m.input("x", {256, 512});
  { const auto g = gaussian(512 * 256, 5); m.floats("w", {512, 256}, std::vector<float>(g.begin(), g.end())); }
  m.node("MatMul", {"x", "w"}, {"y"});
  m.output("y");
  const hw::ChipSpec chip = hw::load_chip("trn2");
  CompileOptions o;
  o.policy = DTypePolicy::BF16;
  o.quant.sparse_4_16 = true;
  const CompiledModel cm = compile(import_onnx_bytes(m.bytes()), chip, o);
  const auto& te = chip.core.tensor;
  double sparse = 0, dense = 0, macs = 0;
  for (const auto& s : cm.segments)
    for (const auto& c : s.program.cores)
      for (const auto& ins : c.stream(isa::Engine::Tensor))
        if (const auto* mm = std::get_if<isa::Matmul>(&ins.op); mm && mm->sparse_stationary) {
          isa::Matmul d = *mm;
          d.sparse_stationary = false;
          sparse += core::TensorEngine::multiply_cycles(ins.op, te);
          dense += core::TensorEngine::multiply_cycles(isa::Op(d), te);
          macs += static_cast<double>(mm->moving.partitions) * static_cast<double>(mm->stationary.free_size() * mm->moving.free_size());
        }
  EXPECT_EQ(macs, 256.0 * 512 * 256);  // every MAC of the MatMul went through the sparse path
  // HARDWARE.md: NeuronCore-v3 316 TF sparse vs 79 TF dense bf16 per core.
  EXPECT_NEAR(dense / sparse, 316.0 / 79.0, 0.01);
}

TEST(Sparsify, RefusedOnAChipWithoutTheSparsePath) {
  testing::OnnxModel m;
  m.input("x", {4, 32});
  m.floats("w", {32, 8}, testing::values(32 * 8, 1));
  m.node("MatMul", {"x", "w"}, {"y"});
  m.output("y");
  CompileOptions o;
  o.policy = DTypePolicy::BF16;
  o.quant.sparse_4_16 = true;
  EXPECT_THROW(compile(import_onnx_bytes(m.bytes()), hw::load_chip("trn1"), o), UnsupportedError);
}

}  // namespace
}  // namespace trnsim::compiler
