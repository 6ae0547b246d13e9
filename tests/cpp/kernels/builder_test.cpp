// The kernel builder: allocation limits, automatic semaphores, a small end-to-end kernel.
#include <gtest/gtest.h>

#include <cmath>

#include "trnsim/common/error.h"
#include "trnsim/core/run.h"
#include "trnsim/hw/spec_loader.h"
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
}  // namespace
