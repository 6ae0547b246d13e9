// Costs against the NKI ISA formulas (exact cycle counts), DMA against its closed form,
// semaphores ordering engines, deadlock reports.
#include <gtest/gtest.h>

#include <cmath>

#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/core/dma_queue.h"
#include "trnsim/core/gpsimd_engine.h"
#include "trnsim/core/vector_engine.h"
#include "trnsim/core/run.h"
#include "trnsim/core/tile_io.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/sim/time.h"

using namespace trnsim;
using namespace trnsim::isa;
using numerics::DType;
using sim::Time;

namespace {

const hw::ChipSpec& trn1() {
  static hw::ChipSpec c = hw::load_chip("trn1");
  return c;
}

Program single_core() {
  Program p;
  p.name = "t";
  p.cores.resize(1);
  p.cores[0].dma_queues.resize(2);
  p.semaphores = 4;
  return p;
}

core::RunResult timing(const Program& p, const hw::ChipSpec& chip = trn1()) {
  core::RunOptions o;
  o.mode = core::Mode::Timing;
  return core::run(p, chip, {}, o);
}

int64_t duration(const core::RunResult& r, Engine e, uint32_t index) {
  for (auto& x : r.records)
    if (x.engine == e && x.index == index) return x.end_ps - x.start_ps;
  return -1;
}

AccessPattern sb(int P, int64_t F, DType t, int64_t off = 0) { return tile_ap(Space::SBUF, 0, P, off, F, t); }
AccessPattern ps(int P, int64_t F, int64_t off = 0) { return tile_ap(Space::PSUM, 0, P, off, F, DType::F32); }

int64_t cyc(double n, double ghz) { return Time::cycles(n, GHz(ghz)).ps(); }

TEST(TensorECost, MatmulFollowsNkiFormula) {
  // Back-to-back matmuls on one stationary: max(min(64, M), N) cycles at 2.8 GHz, x4 in fp32.
  // The first one also loads the stationary (M/4 cycles) with TensorE idle before it.
  Program p = single_core();
  auto& te = p.cores[0].stream(Engine::Tensor);
  te.push_back({Matmul{ps(128, 512), sb(128, 128, DType::BF16), sb(128, 512, DType::BF16, 1024), true, false}, {}});
  te.push_back({Matmul{ps(128, 512), sb(128, 128, DType::BF16), sb(128, 512, DType::BF16, 1024), false, true}, {}});
  te.push_back({Matmul{ps(128, 32, 2048), sb(128, 128, DType::BF16), sb(128, 32, DType::BF16, 1024), true, true}, {}});
  te.push_back({Matmul{ps(32, 32, 4096), sb(128, 32, DType::BF16), sb(128, 32, DType::BF16, 1024), true, true}, {}});
  te.push_back({Matmul{ps(128, 512, 6144), sb(128, 128, DType::F32, 8192), sb(128, 512, DType::F32, 16384), true, true}, {}});
  te.push_back({Transpose{ps(100, 128, 8192), sb(128, 100, DType::BF16)}, {}});
  auto r = timing(p);
  EXPECT_EQ(duration(r, Engine::Tensor, 0), cyc(512 + 32, 2.8));          // + LoadStationary
  EXPECT_EQ(duration(r, Engine::Tensor, 1), cyc(512, 2.8));               // same stationary
  EXPECT_EQ(duration(r, Engine::Tensor, 2), cyc(64, 2.8));                // max(min(64,128), 32)
  EXPECT_EQ(duration(r, Engine::Tensor, 3), cyc(32, 2.8));                // new stationary (8) hidden
  // fp32: x4; its LoadStationary (128/4 x4 = 128 cycles) hides behind the previous 32-cycle
  // matmul only in part.
  EXPECT_EQ(duration(r, Engine::Tensor, 4), cyc(512 * 4 + (128 - 32), 2.8));
  EXPECT_EQ(duration(r, Engine::Tensor, 5), cyc(128, 2.8));               // max(P=128, min(64, 100))
}

TEST(VectorECost, FollowsNkiFormulas) {
  Program p = single_core();
  auto& ve = p.cores[0].stream(Engine::Vector);
  ve.push_back({TensorTensor{sb(128, 1024, DType::BF16), sb(128, 1024, DType::BF16, 4096), sb(128, 1024, DType::BF16, 8192), AluOp::Add}, {}});
  ve.push_back({TensorTensor{sb(128, 1024, DType::F32), sb(128, 1024, DType::F32, 8192), sb(128, 1024, DType::F32, 16384), AluOp::Add}, {}});
  ve.push_back({TensorTensor{sb(128, 512, DType::BF16), ps(128, 512), sb(128, 512, DType::BF16, 4096), AluOp::Add}, {}});
  ve.push_back({TensorReduce{sb(128, 1, DType::F32), sb(128, 1024, DType::BF16), AluOp::Add, 1, false}, {}});
  ve.push_back({TensorReduce{sb(128, 1, DType::F32), sb(128, 1024, DType::F32), AluOp::Add, 1, false}, {}});
  ve.push_back({Memset{sb(128, 1024, DType::BF16), 0.0f}, {}});
  ve.push_back({Memset{sb(128, 1024, DType::BF16), 1.0f}, {}});
  ve.push_back({TensorScalar{sb(128, 10, DType::F32), sb(128, 10, DType::F32), AluOp::Mul, ScalarOperand::immediate(2), AluOp::Bypass, ScalarOperand::immediate(0)}, {}});
  ve.push_back({BnAggr{sb(128, 2, DType::F32), sb(128, 300, DType::F32)}, {}});
  ve.push_back({TensorTensor{sb(128, 300, DType::F32), sb(128, 300, DType::F32), sb(128, 300, DType::F32, 4096), AluOp::Div}, {}});
  auto r = timing(p);
  const double f = 1.12;
  EXPECT_EQ(duration(r, Engine::Vector, 0), cyc(1024, f));       // bf16 contiguous add: N
  EXPECT_EQ(duration(r, Engine::Vector, 1), cyc(2048, f));       // fp32: 2N
  EXPECT_EQ(duration(r, Engine::Vector, 2), cyc(512, f));        // PSUM + SBUF: N
  EXPECT_EQ(duration(r, Engine::Vector, 3), cyc(512, f));        // bf16 reduce add: N/2
  EXPECT_EQ(duration(r, Engine::Vector, 4), cyc(1024, f));       // fp32 reduce: N
  EXPECT_EQ(duration(r, Engine::Vector, 5), cyc(512, f));        // memset zero bf16: N/2
  EXPECT_EQ(duration(r, Engine::Vector, 6), cyc(1024, f));       // memset nonzero: N
  EXPECT_EQ(duration(r, Engine::Vector, 7), cyc(64, f));         // max(MIN_II, 10)
  EXPECT_EQ(duration(r, Engine::Vector, 8), cyc(1300, f));       // bn_aggr 13N/3
  EXPECT_EQ(duration(r, Engine::Vector, 9), cyc(2400, f));       // divide 8N
}

TEST(ScalarAndGpSimdCost, FollowNkiFormulas) {
  Program p = single_core();
  auto& se = p.cores[0].stream(Engine::Scalar);
  se.push_back({Activation{sb(128, 1000, DType::BF16), sb(128, 1000, DType::BF16, 4096), ActFunc::Exp, ScalarOperand::immediate(1), ScalarOperand::immediate(0), false, {}}, {}});
  se.push_back({Activation{sb(128, 1000, DType::BF16), sb(128, 1000, DType::BF16, 4096), ActFunc::Exp, ScalarOperand::immediate(1), ScalarOperand::immediate(0), true, sb(128, 1, DType::F32, 8192)}, {}});
  se.push_back({Activation{sb(128, 20, DType::BF16), sb(128, 20, DType::BF16, 4096), ActFunc::Tanh, ScalarOperand::immediate(1), ScalarOperand::immediate(0), false, {}}, {}});
  auto& gp = p.cores[0].stream(Engine::GpSimd);
  gp.push_back({Iota{sb(128, 256, DType::F32, 16384), 0, 1, {1, 0, 0, 0}}, {}});
  auto r = timing(p);
  EXPECT_EQ(duration(r, Engine::Scalar, 0), cyc(1000, 1.4));
  EXPECT_EQ(duration(r, Engine::Scalar, 1), cyc(1064, 1.4));  // + MIN_II for the reduction
  EXPECT_EQ(duration(r, Engine::Scalar, 2), cyc(64, 1.4));
  EXPECT_EQ(duration(r, Engine::GpSimd, 0), cyc(150 + 256, 1.4));
}

TEST(DmaCost, FixedOverheadPlusBytesOverBandwidth) {
  const auto& dma = trn1().core.dma;
  EXPECT_DOUBLE_EQ(core::dma_efficiency(4096, dma), 1.0);
  EXPECT_NEAR(core::dma_efficiency(2048, dma), 0.944, 0.001);
  EXPECT_LT(core::dma_efficiency(256, dma), 0.6);
  Program p = single_core();
  p.tensors.push_back(HbmTensor{"x", {128, 2048}, DType::BF16, HbmTensor::Kind::Input});
  AccessPattern src = sb(128, 2048, DType::BF16);
  src.space = Space::HBM;
  src.partition_stride = 2048;
  p.cores[0].dma_queues[0].push_back({Dma{sb(128, 2048, DType::BF16), src}, {}});
  auto r = timing(p);
  // 512 KiB at 16 engines x 17 B/ns (4 KiB per partition: full efficiency) + 1300 ns.
  double want_ns = 1300 + 128.0 * 4096 / (16 * 17);
  EXPECT_NEAR(r.total.ns(), want_ns, 0.01);
  // Two such transfers on two queues share the DMA engines: each takes twice the data time.
  p.cores[0].dma_queues[1].push_back({Dma{sb(128, 2048, DType::BF16, 8192), src}, {}});
  auto r2 = timing(p);
  EXPECT_NEAR(r2.total.ns(), 1300 + 2 * 128.0 * 4096 / (16 * 17), 0.01);
}

TEST(Semaphores, OrderEnginesWithLatency) {
  // ScalarE waits for a VectorE result: it starts one semaphore latency after VectorE ends.
  Program p = single_core();
  Instruction v{Memset{sb(128, 1024, DType::F32), 1.0f}, {}};
  v.sync.signal = 0;
  p.cores[0].stream(Engine::Vector).push_back(v);
  Instruction s{Activation{sb(128, 1024, DType::F32, 8192), sb(128, 1024, DType::F32), ActFunc::Exp,
                           ScalarOperand::immediate(1), ScalarOperand::immediate(0), false, {}}, {}};
  s.sync.add_wait(0, 1);
  p.cores[0].stream(Engine::Scalar).push_back(s);
  auto r = timing(p);
  int64_t v_end = -1, s_start = -1;
  for (auto& x : r.records) {
    if (x.engine == Engine::Vector) v_end = x.end_ps;
    if (x.engine == Engine::Scalar) s_start = x.start_ps;
  }
  EXPECT_EQ(s_start, v_end + Time::from(trn1().core.semaphore_latency).ps());
  // Without the wait both start at 0.
  p.cores[0].stream(Engine::Scalar)[0].sync = {};
  auto r2 = timing(p);
  for (auto& x : r2.records) EXPECT_EQ(x.start_ps, 0);
}

TEST(Semaphores, DeadlockNamesTheWaitingEngines) {
  Program p = single_core();
  Instruction a{Memset{sb(128, 64, DType::F32), 0.0f}, {}};
  a.sync.add_wait(1, 1);
  a.sync.signal = 0;
  Instruction b{Iota{sb(128, 64, DType::F32, 4096), 0, 1, {1, 0, 0, 0}}, {}};
  b.sync.add_wait(0, 1);
  b.sync.signal = 1;
  p.cores[0].stream(Engine::Vector).push_back(a);
  p.cores[0].stream(Engine::GpSimd).push_back(b);
  try {
    timing(p);
    FAIL() << "expected a deadlock";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("deadlock"), std::string::npos) << m;
    EXPECT_NE(m.find("core0.VectorE"), std::string::npos) << m;
    EXPECT_NE(m.find("core0.GpSimd"), std::string::npos) << m;
    EXPECT_NE(m.find("semaphore 1 >= 1"), std::string::npos) << m;
  }
}

TEST(Run, FunctionalMemoryStartsAsNaN) {
  // Storing a never-written SBUF tile gives NaN (uninitialised reads show).
  Program p = single_core();
  p.tensors.push_back(HbmTensor{"y", {4, 8}, DType::BF16, HbmTensor::Kind::Output});
  AccessPattern dst = sb(4, 8, DType::BF16);
  dst.space = Space::HBM;
  dst.partition_stride = 8;
  p.cores[0].dma_queues[0].push_back({Dma{dst, sb(4, 8, DType::BF16)}, {}});
  auto r = core::run(p, trn1());
  for (float v : r.outputs.at("y")) EXPECT_TRUE(std::isnan(v));
}

TEST(Run, RecycledScratchpadsStartAsNaNAgain) {
  // Scratchpads are recycled between runs with only the written columns refilled: a run that
  // writes SBUF (here at a 64 KiB offset, and PSUM through a copy) leaves nothing behind for
  // the next run, which still reads NaN there.
  Program w = single_core();
  w.tensors.push_back(HbmTensor{"x", {128, 64}, DType::F32, HbmTensor::Kind::Input});
  w.tensors.push_back(HbmTensor{"y", {128, 64}, DType::F32, HbmTensor::Kind::Output});
  AccessPattern hx = sb(128, 64, DType::F32);
  hx.space = Space::HBM;
  hx.partition_stride = 64;
  AccessPattern hy = hx;
  hy.tensor = 1;
  Instruction ld{Dma{sb(128, 64, DType::F32, 65536), hx}, {}};
  ld.sync.signal = 0;
  w.cores[0].dma_queues[0].push_back(ld);
  Instruction st{Dma{hy, sb(128, 64, DType::F32, 65536)}, {}};
  st.sync.add_wait(0, 1);
  w.cores[0].dma_queues[1].push_back(st);
  std::vector<float> x(128 * 64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  for (int round = 0; round < 3; ++round) {
    auto r = core::run(w, trn1(), {{"x", x}});
    ASSERT_EQ(r.outputs.at("y"), x);  // a byte copy both ways (same dtype)
    Program rd = single_core();
    rd.tensors.push_back(HbmTensor{"y", {128, 64}, DType::F32, HbmTensor::Kind::Output});
    rd.cores[0].dma_queues[0].push_back({Dma{hx, sb(128, 64, DType::F32, 65536)}, {}});
    auto n = core::run(rd, trn1());
    for (float v : n.outputs.at("y")) ASSERT_TRUE(std::isnan(v));
  }
}

TEST(Run, DmaBetweenDtypesRoundsLikeACopyThroughFp32) {
  // fp32 HBM -> bf16 SBUF -> fp32 HBM: the values come back rounded to bf16 (nearest even),
  // the byte-copy fast path applies only when the dtypes match.
  Program p = single_core();
  p.tensors.push_back(HbmTensor{"x", {2, 4}, DType::F32, HbmTensor::Kind::Input});
  p.tensors.push_back(HbmTensor{"y", {2, 4}, DType::F32, HbmTensor::Kind::Output});
  AccessPattern hx = sb(2, 4, DType::F32);
  hx.space = Space::HBM;
  hx.partition_stride = 4;
  AccessPattern hy = hx;
  hy.tensor = 1;
  Instruction ld{Dma{sb(2, 4, DType::BF16), hx}, {}};
  ld.sync.signal = 0;
  p.cores[0].dma_queues[0].push_back(ld);
  Instruction st{Dma{hy, sb(2, 4, DType::BF16)}, {}};
  st.sync.add_wait(0, 1);
  p.cores[0].dma_queues[1].push_back(st);
  const std::vector<float> x = {1.0f, 1.00390625f, 1.01171875f, 3.14159265f, -2.5f, 1e-3f, 65504.0f, 0.0f};
  auto r = core::run(p, trn1(), {{"x", x}});
  const auto& y = r.outputs.at("y");
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], core::from_bf16(core::to_bf16(x[i]))) << i;
  EXPECT_EQ(y[1], 1.0f);        // tie rounds to even
  EXPECT_EQ(y[2], 1.015625f);   // tie rounds up to even
}

TEST(Run, MissingInputIsAnError) {
  Program p = single_core();
  p.tensors.push_back(HbmTensor{"x", {4, 8}, DType::BF16, HbmTensor::Kind::Input});
  EXPECT_THROW(core::run(p, trn1()), Error);
  EXPECT_NO_THROW(timing(p));
}

// NeuronCore-v2 shared ports: VectorE and GpSimd share the SBUF port, VectorE and ScalarE the
// PSUM port. Independent instructions that would overlap on trn2 (and on trn1 with the flags
// off) run one after the other on trn1: the second starts when the first releases the port.
struct PortCase {
  Program p;
  Engine second;
  int64_t first_ps, second_ps;  // durations (exact, from the cost formulas)
};

PortCase sbuf_port_case(const hw::ChipSpec& chip) {
  PortCase c{single_core(), Engine::GpSimd, 0, 0};
  TensorCopy copy{sb(128, 1024, DType::BF16), sb(128, 1024, DType::BF16, 4096)};
  Iota iota{sb(128, 256, DType::F32, 16384), 0, 1, {1, 0, 0, 0}};
  c.p.cores[0].stream(Engine::Vector).push_back({copy, {}});
  c.p.cores[0].stream(Engine::GpSimd).push_back({iota, {}});
  c.first_ps = Time::cycles(core::vector_cycles(copy, chip.core.vector), chip.core.vector.clock).ps();
  c.second_ps = Time::cycles(core::gpsimd_cycles(iota, chip.core.gpsimd), chip.core.gpsimd.clock).ps();
  return c;
}

PortCase psum_port_case(const hw::ChipSpec& chip) {
  PortCase c{single_core(), Engine::Scalar, 0, 0};
  TensorCopy evict{sb(128, 512, DType::F32), ps(128, 512)};  // PSUM -> SBUF on VectorE
  Activation act{sb(128, 512, DType::F32, 8192), ps(128, 512, 2048), ActFunc::Exp, ScalarOperand::immediate(1),
                 ScalarOperand::immediate(0), false, {}};        // PSUM -> SBUF on ScalarE
  c.p.cores[0].stream(Engine::Vector).push_back({evict, {}});
  c.p.cores[0].stream(Engine::Scalar).push_back({act, {}});
  c.first_ps = Time::cycles(core::vector_cycles(evict, chip.core.vector), chip.core.vector.clock).ps();
  c.second_ps = Time::cycles(core::vector_cycles(act, chip.core.scalar), chip.core.scalar.clock).ps();
  return c;
}

const core::InstructionRecord& record_of(const core::RunResult& r, Engine e) {
  for (auto& x : r.records)
    if (x.engine == e) return x;
  throw Error("no record");
}

void expect_overlap(const PortCase& c, const hw::ChipSpec& chip) {
  auto r = timing(c.p, chip);
  const auto& v = record_of(r, Engine::Vector);
  const auto& o = record_of(r, c.second);
  EXPECT_EQ(v.start_ps, 0);
  EXPECT_EQ(v.end_ps, c.first_ps);
  EXPECT_EQ(o.start_ps, 0);
  EXPECT_EQ(o.end_ps, c.second_ps);
  EXPECT_EQ(r.total.ps(), std::max(c.first_ps, c.second_ps));
}

void expect_serialised(const PortCase& c, const hw::ChipSpec& chip) {
  auto r = timing(c.p, chip);
  const auto& v = record_of(r, Engine::Vector);
  const auto& o = record_of(r, c.second);
  EXPECT_EQ(v.start_ps, 0);  // VectorE is first in issue order at time 0
  EXPECT_EQ(v.end_ps, c.first_ps);
  EXPECT_EQ(o.start_ps, c.first_ps);  // waits for the port, then runs its full length
  EXPECT_EQ(o.end_ps, c.first_ps + c.second_ps);
  EXPECT_EQ(r.total.ps(), c.first_ps + c.second_ps);
}

TEST(SharedPorts, FlagsAreSetOnNeuronCoreV2Only) {
  EXPECT_TRUE(trn1().core.shared_sbuf_port_vector_gpsimd);
  EXPECT_TRUE(trn1().core.shared_psum_port_vector_scalar);
  auto trn2 = hw::load_chip("trn2");
  EXPECT_FALSE(trn2.core.shared_sbuf_port_vector_gpsimd);
  EXPECT_FALSE(trn2.core.shared_psum_port_vector_scalar);
}

TEST(SharedPorts, VectorAndGpSimdShareSbufOnTrn1) {
  auto trn2 = hw::load_chip("trn2");
  expect_overlap(sbuf_port_case(trn2), trn2);
  hw::ChipSpec open = trn1();
  open.core.shared_sbuf_port_vector_gpsimd = open.core.shared_psum_port_vector_scalar = false;
  expect_overlap(sbuf_port_case(open), open);
  expect_serialised(sbuf_port_case(trn1()), trn1());
}

TEST(SharedPorts, VectorAndScalarSharePsumOnTrn1) {
  auto trn2 = hw::load_chip("trn2");
  expect_overlap(psum_port_case(trn2), trn2);
  hw::ChipSpec open = trn1();
  open.core.shared_sbuf_port_vector_gpsimd = open.core.shared_psum_port_vector_scalar = false;
  expect_overlap(psum_port_case(open), open);
  expect_serialised(psum_port_case(trn1()), trn1());
  // Only the PSUM port is shared with ScalarE: with that flag off, they overlap again.
  hw::ChipSpec sbuf_only = trn1();
  sbuf_only.core.shared_psum_port_vector_scalar = false;
  expect_overlap(psum_port_case(sbuf_only), sbuf_only);
}

TEST(SharedPorts, ScalarEOnSbufAndTensorENeverWait) {
  // ScalarE reading SBUF and GpSimd are not restricted against each other; VectorE and ScalarE
  // both on SBUF only are not either.
  Program p = single_core();
  p.cores[0].stream(Engine::Vector).push_back({Memset{sb(128, 1024, DType::F32), 1.0f}, {}});
  p.cores[0].stream(Engine::Scalar).push_back({Activation{sb(128, 1024, DType::F32, 8192), sb(128, 1024, DType::F32, 16384),
                                                          ActFunc::Exp, ScalarOperand::immediate(1), ScalarOperand::immediate(0), false, {}}, {}});
  auto r = timing(p);
  for (auto& x : r.records) EXPECT_EQ(x.start_ps, 0);
}

TEST(SharedPorts, WaiterRunsInStreamOrderAfterRelease) {
  // First come, first served by simulated request time: VectorE copy 1 and GpSimd ask at 0
  // (VectorE first in issue order), VectorE copy 2 at copy 1's end, after GpSimd's request, so
  // it waits for GpSimd to release the port.
  PortCase c = sbuf_port_case(trn1());
  c.p.cores[0].stream(Engine::Vector).push_back(c.p.cores[0].stream(Engine::Vector)[0]);
  auto r = timing(c.p);
  int64_t v2_start = -1;
  for (auto& x : r.records)
    if (x.engine == Engine::Vector && x.index == 1) v2_start = x.start_ps;
  const auto& g = record_of(r, Engine::GpSimd);
  EXPECT_EQ(g.start_ps, c.first_ps);
  EXPECT_EQ(v2_start, c.first_ps + c.second_ps);
}

}  // namespace
