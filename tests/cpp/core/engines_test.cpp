// Every instruction's fast (engine) implementation against its plain-loop reference
// (DESIGN principle 6), parametrised over dtypes; exact NKI cycle counts; semaphores.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/core/dma_queue.h"
#include "trnsim/core/run.h"
#include "trnsim/core/tile_io.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/isa/reference.h"
#include "trnsim/isa/validate.h"
#include "trnsim/numerics/convert.h"
#include "ref_memory.h"

using namespace trnsim;
using namespace trnsim::isa;
using numerics::DType;

namespace {

const hw::ChipSpec& trn1() {
  static hw::ChipSpec c = hw::load_chip("trn1");
  return c;
}

// A program that loads `ins` HBM tensors [P, F] into SBUF (tile i at byte offset i * 8 KiB),
// runs one instruction made by `make` on `engine`, and stores `out` (an SBUF pattern) to an
// output tensor.
struct OneOp {
  int P = 128;
  int64_t F = 64;
  std::vector<DType> in_types;
  Engine engine = Engine::Vector;
  std::function<Op(const std::vector<AccessPattern>&)> make;
  AccessPattern out;  // where the result lies (SBUF), stored to tensor "out"

  static constexpr int64_t kSlot = 8192;
  AccessPattern in_tile(int i) const { return tile_ap(Space::SBUF, 0, P, i * kSlot, F, in_types[i]); }

  Program program() const {
    Program p;
    p.name = "one_op";
    p.cores.resize(1);
    p.cores[0].dma_queues.resize(2);
    p.semaphores = 2;
    std::vector<AccessPattern> tiles;
    for (size_t i = 0; i < in_types.size(); ++i) {
      p.tensors.push_back(HbmTensor{fmt::format("in{}", i), {P, F}, in_types[i], HbmTensor::Kind::Input});
      AccessPattern src = tile_ap(Space::SBUF, 0, P, 0, F, in_types[i]);
      src.space = Space::HBM;
      src.tensor = static_cast<uint32_t>(i);
      src.partition_stride = F;
      tiles.push_back(in_tile(static_cast<int>(i)));
      Instruction ld{Dma{tiles.back(), src}, {}};
      ld.sync.signal = 0;
      p.cores[0].dma_queues[0].push_back(ld);
    }
    Instruction op{make(tiles), {}};
    op.sync.add_wait(0, static_cast<uint32_t>(in_types.size()));
    op.sync.signal = 1;
    p.cores[0].stream(engine).push_back(op);
    p.tensors.push_back(HbmTensor{"out", {out.partitions, out.free_size()}, out.dtype, HbmTensor::Kind::Output});
    AccessPattern dst = tile_ap(Space::SBUF, 0, out.partitions, 0, out.free_size(), out.dtype);
    dst.space = Space::HBM;
    dst.tensor = static_cast<uint32_t>(in_types.size());
    dst.partition_stride = out.free_size();
    Instruction st{Dma{dst, out}, {}};
    st.sync.add_wait(1, 1);
    p.cores[0].dma_queues[1].push_back(st);
    return p;
  }
};

struct OpCase {
  std::string name;
  int ninputs;
  Engine engine;
  bool positive;       // inputs in [0.25, 4] (log, rsqrt, sqrt, div)
  double rel_tol;      // 0: bitwise equal
  // Builds the instruction; `out_dtype` is the case's dtype; returns the result pattern in out.
  std::function<Op(const std::vector<AccessPattern>&, DType, AccessPattern&)> make;
};

AccessPattern out_tile(int P, int64_t F, DType t) { return tile_ap(Space::SBUF, 0, P, 7 * OneOp::kSlot, F, t); }

std::vector<OpCase> op_cases() {
  std::vector<OpCase> v;
  auto tt = [](AluOp op, bool pos) {
    return OpCase{fmt::format("tensor_tensor_{}", alu_name(op)), 2, Engine::Vector, pos, 0,
                  [op](auto& in, DType t, AccessPattern& out) {
                    out = out_tile(128, 64, t);
                    return Op(TensorTensor{out, in[0], in[1], op});
                  }};
  };
  v.push_back(tt(AluOp::Add, false));
  v.push_back(tt(AluOp::Sub, false));
  v.push_back(tt(AluOp::Mul, false));
  v.push_back(tt(AluOp::Max, false));
  v.push_back(tt(AluOp::Div, true));
  v.push_back(tt(AluOp::IsGt, false));
  v.push_back({"tensor_scalar_imm", 1, Engine::Vector, false, 0, [](auto& in, DType t, AccessPattern& out) {
                 out = out_tile(128, 64, t);
                 return Op(TensorScalar{out, in[0], AluOp::Mul, ScalarOperand::immediate(1.5f), AluOp::Add,
                                        ScalarOperand::immediate(-0.25f)});
               }});
  v.push_back({"tensor_scalar_per_partition", 2, Engine::Vector, false, 0, [](auto& in, DType t, AccessPattern& out) {
                 out = out_tile(128, 64, t);
                 AccessPattern s = in[1];
                 s.dims[0].count = 1;  // column 0 of input 1: one scalar per partition
                 return Op(TensorScalar{out, in[0], AluOp::Sub, ScalarOperand::tensor(s), AluOp::Max,
                                        ScalarOperand::immediate(0.0f), true});
               }});
  v.push_back({"reduce_add", 1, Engine::Vector, false, 1e-6, [](auto& in, DType t, AccessPattern& out) {
                 out = out_tile(128, 1, DType::F32);
                 return Op(TensorReduce{out, in[0], AluOp::Add, 1, false});
               }});
  v.push_back({"reduce_max_2d_negate", 1, Engine::Vector, false, 0, [](auto& in, DType t, AccessPattern& out) {
                 out = out_tile(128, 8, t);
                 AccessPattern a = in[0];
                 a.ndims = 2;
                 a.dims[0] = {8, 8};
                 a.dims[1] = {1, 8};
                 return Op(TensorReduce{out, a, AluOp::Max, 1, true});
               }});
  v.push_back({"copy_cast_to_bf16", 1, Engine::Vector, false, 0, [](auto& in, DType, AccessPattern& out) {
                 out = out_tile(128, 64, DType::BF16);
                 return Op(TensorCopy{out, in[0]});
               }});
  v.push_back({"copy_strided_on_scalar", 1, Engine::Scalar, false, 0, [](auto& in, DType t, AccessPattern& out) {
                 out = out_tile(128, 32, t);
                 AccessPattern a = in[0];
                 a.dims[0] = {2, 32};  // every other element
                 return Op(TensorCopy{out, a});
               }});
  v.push_back({"select", 3, Engine::Vector, false, 0, [](auto& in, DType t, AccessPattern& out) {
                 out = out_tile(128, 64, t);
                 return Op(Select{out, in[0], in[1], in[2]});
               }});
  v.push_back({"bn_stats", 1, Engine::Vector, false, 1e-6, [](auto& in, DType, AccessPattern& out) {
                 out = out_tile(128, 3, DType::F32);
                 return Op(BnStats{out, in[0]});
               }});
  v.push_back({"bn_aggr", 1, Engine::Vector, true, 1e-6, [](auto& in, DType, AccessPattern& out) {
                 out = out_tile(128, 2, DType::F32);
                 AccessPattern a = in[0];
                 a.dims[0].count = 63;  // 21 (count, mean, var) triples of positive values
                 return Op(BnAggr{out, a});
               }});
  v.push_back({"memset", 0, Engine::Vector, false, 0, [](auto&, DType t, AccessPattern& out) {
                 out = out_tile(128, 64, t);
                 return Op(Memset{out, 0.375f});
               }});
  for (ActFunc f : {ActFunc::Exp, ActFunc::Tanh, ActFunc::Gelu, ActFunc::Silu, ActFunc::Sigmoid, ActFunc::Relu,
                    ActFunc::Rsqrt, ActFunc::Sqrt, ActFunc::Square, ActFunc::Log, ActFunc::Copy}) {
    bool pos = f == ActFunc::Rsqrt || f == ActFunc::Sqrt || f == ActFunc::Log;
    v.push_back({fmt::format("activation_{}", act_name(f)), 2, Engine::Scalar, pos, 0,
                 [f](auto& in, DType t, AccessPattern& out) {
                   out = out_tile(128, 64, t);
                   AccessPattern bias = in[1];
                   bias.dims[0].count = 1;
                   return Op(Activation{out, in[0], f, ScalarOperand::immediate(0.5f), ScalarOperand::tensor(bias),
                                        false, {}});
                 }});
  }
  v.push_back({"activation_exp_accum", 1, Engine::Scalar, false, 1e-6, [](auto& in, DType t, AccessPattern& out) {
                 out = tile_ap(Space::SBUF, 0, 128, 6 * OneOp::kSlot, 1, DType::F32);
                 AccessPattern y = out_tile(128, 64, t);
                 return Op(Activation{y, in[0], ActFunc::Exp, ScalarOperand::immediate(1.0f),
                                      ScalarOperand::immediate(0.0f), true, out});
               }});
  v.push_back({"iota", 0, Engine::GpSimd, false, 0, [](auto&, DType, AccessPattern& out) {
                 out = out_tile(128, 64, DType::F32);
                 return Op(Iota{out, 3, 100, {2, 0, 0, 0}});
               }});
  v.push_back({"partition_reduce_add", 1, Engine::GpSimd, false, 1e-6, [](auto& in, DType, AccessPattern& out) {
                 out = out_tile(1, 64, DType::F32);
                 return Op(PartitionReduce{out, in[0], AluOp::Add});
               }});
  v.push_back({"partition_broadcast", 1, Engine::GpSimd, false, 0, [](auto& in, DType t, AccessPattern& out) {
                 out = out_tile(128, 64, t);
                 return Op(PartitionBroadcast{out, in[0].with_partitions(0, 1)});
               }});
  v.push_back({"transpose_via_psum", 1, Engine::Tensor, false, 0, [](auto& in, DType t, AccessPattern& out) {
                 // Result lands in PSUM; the test stores it from there.
                 out = tile_ap(Space::PSUM, 0, 64, 0, 128, DType::F32);
                 return Op(Transpose{out, in[0]});
               }});
  v.push_back({"matmul", 2, Engine::Tensor, false, 2e-4, [](auto& in, DType, AccessPattern& out) {
                 out = tile_ap(Space::PSUM, 0, 64, 2048, 64, DType::F32);
                 return Op(Matmul{out, in[0], in[1], true, true, false});
               }});
  return v;
}

struct Param {
  OpCase op;
  DType dtype;
};

void PrintTo(const Param& p, std::ostream* os) { *os << p.op.name << "/" << numerics::name(p.dtype); }

class InstructionVsReference : public testing::TestWithParam<Param> {};

TEST_P(InstructionVsReference, SameResult) {
  const auto& [c, t] = GetParam();
  OneOp one;
  one.in_types.assign(c.ninputs, t);
  one.engine = c.engine;
  AccessPattern out;
  one.make = [&](const std::vector<AccessPattern>& in) { return c.make(in, t, out); };
  // make() fixes `out`; call it once to know the output before building the program.
  std::vector<AccessPattern> probe;
  for (int i = 0; i < c.ninputs; ++i) probe.push_back(one.in_tile(i));
  (void)c.make(probe, t, out);
  one.out = out;
  Program p = one.program();
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(c.positive ? 0.25f : -3.0f, c.positive ? 4.0f : 3.0f);
  std::map<std::string, std::vector<float>> inputs;
  for (int i = 0; i < c.ninputs; ++i) {
    std::vector<float> v(one.P * one.F);
    for (auto& x : v) x = u(rng);
    if (c.name == "select" && i == 0)
      for (auto& x : v) x = x > 0 ? 1.0f : 0.0f;
    inputs[fmt::format("in{}", i)] = v;
  }
  auto fast = core::run(p, trn1(), inputs).outputs.at("out");
  auto ref = run_reference(p, inputs);
  ASSERT_EQ(fast.size(), ref.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    if (std::isnan(ref[i])) {
      EXPECT_TRUE(std::isnan(fast[i])) << i;
      continue;
    }
    double tol = c.rel_tol * std::max(1.0, std::fabs(double(ref[i])));
    if (c.rel_tol == 0) ASSERT_EQ(fast[i], ref[i]) << "element " << i;
    else ASSERT_NEAR(fast[i], ref[i], tol) << "element " << i;
  }
}

std::vector<Param> all_params() {
  std::vector<Param> v;
  for (auto& c : op_cases())
    for (DType t : {DType::F32, DType::BF16, DType::F16, DType::F8E4M3}) v.push_back({c, t});
  return v;
}

INSTANTIATE_TEST_SUITE_P(AllOps, InstructionVsReference, testing::ValuesIn(all_params()),
                         [](const testing::TestParamInfo<Param>& i) {
                           return i.param.op.name + "_" + std::string(numerics::name(i.param.dtype));
                         });

// The indirect DMA (an embedding lookup): an index tile in SBUF picks rows of an HBM table.
// queue 0 loads the indices, then gathers 40 of the 50 rows (in bf16: the DMA converts, as a
// plain DMA does) into SBUF; queue 1 stores them. Against the reference and against the
// table's rows themselves.
Program indirect_program(AccessPattern* gather_out) {
  const int V = 50, F = 24, P = 40;
  Program p;
  p.name = "indirect_dma";
  p.cores.resize(1);
  p.cores[0].dma_queues.resize(2);
  p.semaphores = 2;
  p.tensors.push_back(HbmTensor{"table", {V, F}, DType::F32, HbmTensor::Kind::Input});
  p.tensors.push_back(HbmTensor{"ids", {P}, DType::F32, HbmTensor::Kind::Input});
  p.tensors.push_back(HbmTensor{"out", {P, F}, DType::F32, HbmTensor::Kind::Output});
  AccessPattern ids = tile_ap(Space::SBUF, 0, P, 0, 1, DType::F32);
  ids.space = Space::HBM;
  ids.tensor = 1;
  ids.partition_stride = 1;
  AccessPattern idx_tile = tile_ap(Space::SBUF, 0, P, 0, 1, DType::F32);
  Instruction ld{Dma{idx_tile, ids}, {}};
  p.cores[0].dma_queues[0].push_back(ld);
  AccessPattern table = tile_ap(Space::SBUF, 0, 1, 0, V * F, DType::F32);
  table.space = Space::HBM;
  table.tensor = 0;
  table.ndims = 2;
  table.dims[0] = {F, V};
  table.dims[1] = {1, F};
  *gather_out = tile_ap(Space::SBUF, 0, P, 4096, F, DType::BF16);
  Instruction g{Dma{*gather_out, table, true, idx_tile}, {}};
  g.sync.signal = 0;
  p.cores[0].dma_queues[0].push_back(g);
  AccessPattern dst = tile_ap(Space::SBUF, 0, P, 0, F, DType::F32);
  dst.space = Space::HBM;
  dst.tensor = 2;
  dst.partition_stride = F;
  Instruction st{Dma{dst, *gather_out}, {}};
  st.sync.add_wait(0, 1);
  p.cores[0].dma_queues[1].push_back(st);
  return p;
}

TEST(IndirectDma, GathersTheIndexedRowsLikeTheReference) {
  AccessPattern g;
  const Program p = indirect_program(&g);
  isa::validate(p, trn1());
  std::vector<float> table(50 * 24), ids(40);
  for (size_t i = 0; i < table.size(); ++i) table[i] = 0.37f * static_cast<float>(i) - 100.0f;
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<float>((i * 17 + 3) % 50);
  const std::map<std::string, std::vector<float>> in{{"table", table}, {"ids", ids}};
  const auto fast = core::run(p, trn1(), in).outputs.at("out");
  const auto ref = run_reference(p, in);
  ASSERT_EQ(fast.size(), ref.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    ASSERT_EQ(fast[i], ref[i]) << i;
    const size_t row = static_cast<size_t>(ids[i / 24]);
    ASSERT_EQ(fast[i], numerics::decode(numerics::encode(table[row * 24 + i % 24], DType::BF16), DType::BF16)) << i;
  }
  // Timing: 40 rows of 48 bytes cost like a plain DMA of that many short rows, not of the table.
  const double t = core::run(p, trn1(), {}, {.mode = core::Mode::Timing}).total.ns() * 1e-9;
  EXPECT_GT(t, 0);
  EXPECT_LT(t, 20e-6);
}

TEST(IndirectDma, AnIndexOutsideTheTableStopsTheRunNamingIt) {
  AccessPattern g;
  const Program p = indirect_program(&g);
  std::vector<float> ids(40, 1.0f);
  ids[7] = 50.0f;
  try {
    core::run(p, trn1(), {{"table", std::vector<float>(50 * 24, 1.0f)}, {"ids", ids}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("index 50 at partition 7 is not a row of the 50-row table"), std::string::npos) << e.what();
  }
}

TEST(IndirectDma, ValidationNamesABadIndexOrTable) {
  AccessPattern g;
  Program p = indirect_program(&g);
  auto& gather = std::get<Dma>(p.cores[0].dma_queues[0][1].op);
  gather.index.partitions = 39;
  EXPECT_THROW(isa::validate(p, trn1()), ShapeError);
  gather.index.partitions = 40;
  gather.src.ndims = 1;
  EXPECT_THROW(isa::validate(p, trn1()), ShapeError);
}

}  // namespace
