// The kernel builder: allocation limits, automatic semaphores, a small end-to-end kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "trnsim/common/error.h"
#include "trnsim/core/run.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/kernels/access_overlap.h"
#include "trnsim/kernels/kernel_builder.h"

using namespace trnsim;
using namespace trnsim::kernels;

namespace {
const hw::ChipSpec& trn1() {
  static hw::ChipSpec c = hw::load_chip("trn1");
  return c;
}

TEST(Builder, SbufOverAllocationIsAShapeError) {
  KernelBuilder kb(trn1());
  kb.sbuf_tile({128, 64 * 1024}, DType::BF16, "a");  // 128 KiB per partition
  try {
    kb.sbuf_tile({128, 32 * 1024}, DType::F32, "b");   // another 128 KiB: too much
    FAIL();
  } catch (const ShapeError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("sbuf_tile 'b'"), std::string::npos) << m;
    EXPECT_NE(m.find("largest free gap"), std::string::npos) << m;
  }
  EXPECT_THROW(kb.sbuf_tile({129, 4}, DType::F32), ShapeError);
}

TEST(Builder, PsumTilesStayInsideBanksAndRunOut) {
  KernelBuilder kb(trn1());
  std::vector<Tile> t;
  for (int i = 0; i < 8; ++i) t.push_back(kb.psum_tile({128, 512}));
  EXPECT_EQ(kb.psum_free_banks(), 0);
  EXPECT_THROW(kb.psum_tile({128, 4}), ShapeError);
  kb.free(t[3]);
  Tile u = kb.psum_tile({128, 256});
  EXPECT_EQ(u.ap().offset, 3 * 2048);
}

TEST(Builder, FreedTilesAreReusedAndErrorsNameTheCall) {
  KernelBuilder kb(trn1());
  auto x = kb.hbm_input("x", {128, 1024}, DType::BF16);
  Tile a = kb.sbuf_tile({128, 1024}, DType::BF16);
  int64_t off = a.ap().offset;
  kb.free(a);
  Tile b = kb.sbuf_tile({128, 1024}, DType::BF16);
  EXPECT_EQ(b.ap().offset, off);
  Tile acc = kb.psum_tile({128, 512});
  try {
    kb.matmul(acc, b.slice({{0, 128}, {0, 128}}), b.slice({{0, 128}, {0, 1024}}), true, true, false, {{}, -1, "qk"});
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("qk: matmul"), std::string::npos) << e.what();
  }
  EXPECT_THROW(kb.load(b, x.slice({{0, 128}, {0, 512}})), ShapeError);  // 512 into 1024 elements
}

TEST(Builder, DependenciesBecomeSemaphores) {
  // load -> activation -> store: ScalarE waits on the DMA queue, the store on ScalarE.
  KernelBuilder kb(trn1());
  auto x = kb.hbm_input("x", {128, 256}, DType::F32);
  auto y = kb.hbm_output("y", {128, 256}, DType::F32);
  Tile t = kb.sbuf_tile({128, 256}, DType::F32);
  Tile u = kb.sbuf_tile({128, 256}, DType::F32);
  kb.load(t, x);
  kb.activation(u, t, ActFunc::Exp, 2.0f, 0.5f);
  kb.store(y, u);
  isa::Program p = kb.build();
  const auto& se = p.cores[0].stream(Engine::Scalar);
  ASSERT_EQ(se.size(), 1u);
  EXPECT_EQ(se[0].sync.num_waits, 1);
  EXPECT_GE(se[0].sync.signal, 0);
  std::vector<float> in(128 * 256);
  for (size_t i = 0; i < in.size(); ++i) in[i] = std::sin(0.01f * i);
  auto r = core::run(p, trn1(), {{"x", in}});
  for (size_t i = 0; i < in.size(); ++i) ASSERT_FLOAT_EQ(r.outputs.at("y")[i], std::exp(in[i] * 2.0f + 0.5f));
  // The activation starts after the load completes plus the semaphore latency.
  int64_t load_end = 0, act_start = 0;
  for (auto& rec : r.records) {
    if (rec.engine == Engine::Dma && rec.queue == 0) load_end = rec.end_ps;
    if (rec.engine == Engine::Scalar) act_start = rec.start_ps;
  }
  EXPECT_EQ(act_start, load_end + 100000);
}

TEST(Builder, WriteAfterReadWaitsForTheReader) {
  // Reusing a tile for a second load must wait for the first tile's reader (matmul).
  KernelBuilder kb(trn1());
  auto x = kb.hbm_input("x", {256, 512}, DType::BF16);
  Tile w = kb.sbuf_tile({128, 128}, DType::BF16);
  Tile t = kb.sbuf_tile({128, 512}, DType::BF16);
  Tile acc = kb.psum_tile({128, 512});
  kb.memset(w, 1.0f);
  kb.load(t, x.slice({{0, 128}, {0, 512}}), {{}, 0});
  kb.matmul(acc, w, t, true, false);
  kb.load(t, x.slice({{128, 256}, {0, 512}}), {{}, 1});
  kb.matmul(acc, w, t, false, true);
  isa::Program p = kb.build();
  const auto& q1 = p.cores[0].dma_queues[1];
  ASSERT_EQ(q1.size(), 1u);
  // It waits on TensorE's semaphore (stream 0 of core 0); also on queue 0 (write after write).
  bool on_tensor = false;
  for (int i = 0; i < q1[0].sync.num_waits; ++i) on_tensor |= q1[0].sync.waits[i].semaphore == 0u;
  EXPECT_TRUE(on_tensor);
}

TEST(Builder, ManyProducersSpillIntoNops) {
  KernelBuilder kb(trn1(), {1, 16});
  auto x = kb.hbm_input("x", {128, 6 * 64}, DType::F32);
  Tile t = kb.sbuf_tile({128, 6 * 64}, DType::F32);
  for (int i = 0; i < 6; ++i) kb.load(t.slice({{0, 128}, {i * 64, (i + 1) * 64}}), x.slice({{0, 128}, {i * 64, (i + 1) * 64}}));
  Tile s = kb.sbuf_tile({128, 1}, DType::F32);
  kb.reduce(s, t, AluOp::Add);
  isa::Program p = kb.build();
  const auto& ve = p.cores[0].stream(Engine::Vector);
  ASSERT_EQ(ve.size(), 2u);  // a Nop carrying 4 waits, then the reduce with 2
  EXPECT_TRUE(std::holds_alternative<isa::Nop>(ve[0].op));
  EXPECT_EQ(ve[0].sync.num_waits + ve[1].sync.num_waits, 6);
  std::vector<float> in(128 * 384, 1.0f);
  auto r = core::run(p, trn1(), {{"x", in}});
  EXPECT_GT(r.total.ns(), 1300);
}
// ---- exact overlap of strided accesses ----------------------------------------------------

// Streams per core in the program (compute engines, then the builder's DMA queues): semaphore s
// belongs to core s / streams.
constexpr uint32_t kStreams = isa::kComputeEngines + 16;
const hw::ChipSpec& trn2() {
  static hw::ChipSpec c = hw::load_chip("trn2");
  return c;
}
int waits_on_core(const isa::Instruction& ins, uint32_t core) {
  int n = 0;
  for (int i = 0; i < ins.sync.num_waits; ++i) n += ins.sync.waits[i].semaphore / kStreams == core;
  return n;
}
bool waits_on(const isa::Instruction& ins, uint32_t sem) {
  for (int i = 0; i < ins.sync.num_waits; ++i) if (ins.sync.waits[i].semaphore == sem) return true;
  return false;
}

TEST(BuilderOverlap, InterleavedColumnStoresFromTwoCoresDoNotWait) {
  // Core c writes columns [c*256, (c+1)*256) of every row: byte extents overlap, bytes do not.
  KernelBuilder kb(trn2(), {2, 16});
  auto y = kb.hbm_output("y", {128, 512}, DType::F32);
  for (int c = 0; c < 2; ++c) {
    kb.set_core(c);
    Tile t = kb.sbuf_tile({128, 256}, DType::F32);
    kb.memset(t, 1.0f + c);
    kb.store(y.slice({{0, 128}, {c * 256, (c + 1) * 256}}), t, {{}, 0});
  }
  // Core 1 then overwrites columns 200..300 (across the two halves): it must wait for core 0.
  Tile u = kb.sbuf_tile({128, 100}, DType::F32);
  kb.memset(u, 5.0f);
  kb.store(y.slice({{0, 128}, {200, 300}}), u, {{}, 1});
  kb.set_core(0);
  isa::Program p = kb.build();
  const auto& q1 = p.cores[1].dma_queues[0];
  ASSERT_EQ(q1.size(), 1u);
  EXPECT_EQ(waits_on_core(q1[0], 0), 0);  // no wait on core 0's store
  const auto& late = p.cores[1].dma_queues[1];
  ASSERT_EQ(late.size(), 1u);
  EXPECT_TRUE(waits_on(late[0], isa::kComputeEngines + 0));            // core 0, queue 0 (WAW)
  EXPECT_TRUE(waits_on(late[0], kStreams + isa::kComputeEngines + 0));  // core 1, queue 0 (WAW)
  auto r = core::run(p, trn2(), {});
  const auto& out = r.outputs.at("y");
  for (int row = 0; row < 128; ++row)
    for (int col = 0; col < 512; ++col) {
      float want = (col >= 200 && col < 300) ? 5.0f : (col < 256 ? 1.0f : 2.0f);
      ASSERT_EQ(out[row * 512 + col], want) << row << "," << col;
    }
}

TEST(BuilderOverlap, HeadSlicesOnQueuesDoNotWaitButTheSameHeadDoes) {
  // out[B=2, S=64, H=4, D=32]: head (b, h) is rows S of a strided [64, 32] window.
  KernelBuilder kb(trn2(), {1, 16});
  auto out = kb.hbm_output("out", {2, 64, 4, 32}, DType::BF16);
  View rows = out.with_partition_axis(1);  // partitions S; free (B, H, D)
  Tile t = kb.sbuf_tile({64, 1, 1, 32}, DType::BF16);
  kb.memset(t, 1.0f);
  int q = 0;
  for (int b = 0; b < 2; ++b)
    for (int h = 0; h < 4; ++h)
      kb.store(rows.slice({{0, 64}, {b, b + 1}, {h, h + 1}, {0, 32}}), t, {{}, q++});
  // Head (1, 2) again, on another queue: write after write.
  kb.store(rows.slice({{0, 64}, {1, 2}, {2, 3}, {0, 32}}), t, {{}, q});
  // A read of a 16-column window of head (0, 1) waits for exactly that head's queue (1).
  Tile u = kb.sbuf_tile({64, 1, 1, 16}, DType::BF16);
  kb.load(u, rows.slice({{0, 64}, {0, 1}, {1, 2}, {8, 24}}), {{}, q + 1});
  isa::Program p = kb.build();
  for (int k = 0; k < 8; ++k) {
    const auto& ins = p.cores[0].dma_queues[k][0];
    for (int j = 0; j < 8; ++j) EXPECT_FALSE(waits_on(ins, isa::kComputeEngines + j)) << k << " waits on " << j;
  }
  const auto& again = p.cores[0].dma_queues[8][0];
  EXPECT_TRUE(waits_on(again, isa::kComputeEngines + 6));  // head (1, 2) was queue 6
  for (int j = 0; j < 8; ++j)
    if (j != 6) EXPECT_FALSE(waits_on(again, isa::kComputeEngines + j)) << j;
  const auto& rd = p.cores[0].dma_queues[9][0];
  EXPECT_TRUE(waits_on(rd, isa::kComputeEngines + 1));
  for (int j = 0; j < 9; ++j)
    if (j != 1) EXPECT_FALSE(waits_on(rd, isa::kComputeEngines + j)) << j;
}

TEST(BuilderOverlap, DisjointPartitionsAndInterleavedColumnsOfOneTile) {
  // Even and odd columns of one tile written by VectorE and GpSimd, then read back by ScalarE
  // (which waits for both, not for the DMA); a load into other partitions waits for no one.
  KernelBuilder kb(trn2());
  Tile t = kb.sbuf_tile({128, 64, 2}, DType::F32);
  kb.memset(t.slice({{0, 64}, {0, 64}, {0, 1}}), 1.0f);
  kb.memset(t.slice({{0, 64}, {0, 64}, {1, 2}}), 2.0f, {Engine::GpSimd});
  auto x = kb.hbm_input("x", {64, 64, 1}, DType::F32);
  kb.load(t.slice({{64, 128}, {0, 64}, {0, 1}}), x, {{}, 0});
  Tile u = kb.sbuf_tile({64, 128}, DType::F32);
  kb.activation(u, t.slice({{0, 64}}).reshape({64, 128}), ActFunc::Copy);
  isa::Program p = kb.build();
  const auto& gp = p.cores[0].stream(Engine::GpSimd);
  ASSERT_EQ(gp.size(), 1u);
  EXPECT_EQ(gp[0].sync.num_waits, 0);
  ASSERT_EQ(p.cores[0].dma_queues[0].size(), 1u);
  EXPECT_EQ(p.cores[0].dma_queues[0][0].sync.num_waits, 0);
  const auto& se = p.cores[0].stream(Engine::Scalar);
  ASSERT_EQ(se.size(), 1u);
  EXPECT_EQ(se[0].sync.num_waits, 2);
  EXPECT_TRUE(waits_on(se[0], static_cast<uint32_t>(Engine::Vector)));
  EXPECT_TRUE(waits_on(se[0], static_cast<uint32_t>(Engine::GpSimd)));
}

// Reference: the pattern's bytes, enumerated element by element.
std::set<int64_t> brute_bytes(const isa::AccessPattern& ap) {
  std::set<int64_t> s;
  const int64_t eb = ap.element_bytes();
  const int64_t parts = ap.space == isa::Space::HBM ? ap.partitions : 1;
  for (int64_t p = 0; p < parts; ++p)
    for (int64_t i = 0; i < ap.free_size(); ++i) {
      const int64_t at = ap.offset + (p * ap.partition_stride + ap.element_offset(i)) * eb;
      for (int64_t k = 0; k < eb; ++k) s.insert(at + k);
    }
  return s;
}

isa::AccessPattern random_pattern(std::mt19937& rng) {
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  isa::AccessPattern a;
  a.space = uni(0, 1) ? isa::Space::HBM : isa::Space::SBUF;
  const DType types[] = {DType::F32, DType::BF16, DType::F8E4M3};
  a.dtype = types[uni(0, 2)];
  a.partitions = static_cast<uint16_t>(uni(1, 4));
  if (uni(0, 1)) {  // a window of a row-major [R, C] (or [R, C/k, k]) array: the builder's views
    const int cols = uni(2, 24), r0 = uni(0, 3), c0 = uni(0, cols - 1);
    a.offset = (r0 * cols + c0) * a.element_bytes();
    a.partition_stride = cols * uni(1, 3);
    a.ndims = static_cast<uint8_t>(uni(1, 2));
    a.dims[0] = {a.ndims == 2 ? cols : 1, uni(1, a.ndims == 2 ? 4 : cols - c0)};
    if (a.ndims == 2) a.dims[1] = {1, uni(1, cols - c0)};
  } else {          // anything: negative, zero and overlapping strides
    a.offset = uni(0, 40);
    a.partition_stride = uni(-6, 12);
    a.ndims = static_cast<uint8_t>(uni(0, 4));
    for (int d = 0; d < a.ndims; ++d) a.dims[d] = {uni(-10, 20), uni(1, 5)};
    auto [lo, hi] = a.byte_extent();
    if (lo < 0) a.offset -= lo;  // keep addresses non-negative
  }
  return a;
}

TEST(BuilderOverlap, ExactTestAgreesWithBruteForceByteSets) {
  std::mt19937 rng(12345);
  int answered = 0, disjoint_in_box = 0, unknown = 0;
  for (int it = 0; it < 20000; ++it) {
    isa::AccessPattern a = random_pattern(rng), b = random_pattern(rng);
    b.space = a.space;
    const auto sa = brute_bytes(a), sb = brute_bytes(b);
    bool truth = false;
    for (int64_t x : sa) if (sb.count(x)) { truth = true; break; }
    const ByteSet xa = byte_set(a), xb = byte_set(b);
    // The normalised set is the same set: its bounds are the true bounds.
    ASSERT_EQ(xa.lo(), *sa.begin()) << a.to_string();
    ASSERT_EQ(xa.hi(), *sa.rbegin() + 1) << a.to_string();
    const int64_t budget = it % 4 == 0 ? 3 : 4096;  // a small budget exercises the fallback
    auto got = bytes_intersect(xa, xb, budget);
    if (!got) { ++unknown; continue; }
    ++answered;
    ASSERT_EQ(*got, truth) << a.to_string() << " vs " << b.to_string();
    ASSERT_EQ(*bytes_intersect(xb, xa), truth) << "not symmetric: " << a.to_string() << " vs " << b.to_string();
    auto [alo, ahi] = a.byte_extent();
    auto [blo, bhi] = b.byte_extent();
    disjoint_in_box += !truth && alo < bhi && blo < ahi;
    if (bytes_cover(xa, xb))  // a claimed cover is a real one
      for (int64_t x : sb) ASSERT_TRUE(sa.count(x)) << a.to_string() << " covers " << b.to_string();
  }
  EXPECT_GT(answered, 15000);
  EXPECT_GT(unknown, 0);
  EXPECT_GT(disjoint_in_box, 1000);  // cases the bounding box alone calls conflicts
}
}  // namespace
