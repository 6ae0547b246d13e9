// A hand-built program and a hand-built RunResult with round numbers, so the summary and the
// trace can be checked against closed forms without depending on the simulator's timing.
//
// core0: dma0 loads a [128, 512] bf16 tile (131072 B) in [0, 1000] ns; TensorE runs two
// [128x128]^T @ [128x512] bf16 matmuls in [1000, 1500] and [1500, 2000] ns; dma1 stores a
// [128, 512] fp32 tile (262144 B) in [2000, 3000] ns; dma2 holds two loads that overlap in
// time ([0, 800] and [400, 1200] ns, 65536 B each). Total 3000 ns.
#pragma once
#include "trnsim/core/run.h"
#include "trnsim/isa/program.h"

namespace trnsim::report::testing {

inline constexpr double kMatmulFlops = 2.0 * 128 * 128 * 512;
inline constexpr double kHbmBytes = 131072 + 262144 + 2 * 65536;

inline isa::Program fixture_program() {
  using isa::Space;
  using numerics::DType;
  isa::Program p;
  p.name = "fixture";
  p.tensors = {{"a", {128, 512}, DType::BF16, isa::HbmTensor::Kind::Input},
               {"out", {128, 512}, DType::F32, isa::HbmTensor::Kind::Output},
               {"b", {128, 512}, DType::BF16, isa::HbmTensor::Kind::Input}};
  p.cores.resize(1);
  auto& c = p.cores[0];
  auto hbm = [](uint32_t t, DType d, int64_t offset, int parts) {
    isa::AccessPattern a;
    a.space = Space::HBM;
    a.dtype = d;
    a.tensor = t;
    a.offset = offset;
    a.partitions = static_cast<uint16_t>(parts);
    a.partition_stride = 512;
    a.ndims = 1;
    a.dims[0] = {1, 512};
    return a;
  };
  auto sb = isa::tile_ap(Space::SBUF, 0, 128, 0, 512, DType::BF16);
  auto sb2 = isa::tile_ap(Space::SBUF, 0, 128, 1024, 128, DType::BF16);
  auto ps = isa::tile_ap(Space::PSUM, 0, 128, 0, 512, DType::F32);
  c.dma_queues.resize(3);
  c.dma_queues[0].push_back({isa::Dma{sb, hbm(0, DType::BF16, 0, 128)}, {}});
  c.stream(isa::Engine::Tensor).push_back({isa::Matmul{ps, sb2, sb, true, false}, {}});
  c.stream(isa::Engine::Tensor).push_back({isa::Matmul{ps, sb2, sb, false, true}, {}});
  c.dma_queues[1].push_back({isa::Dma{hbm(1, DType::F32, 0, 128), ps}, {}});
  auto half = isa::tile_ap(Space::SBUF, 0, 64, 4096, 512, DType::BF16);
  c.dma_queues[2].push_back({isa::Dma{half, hbm(2, DType::BF16, 0, 64)}, {}});
  c.dma_queues[2].push_back({isa::Dma{half, hbm(2, DType::BF16, 64 * 512 * 2, 64)}, {}});
  return p;
}

inline core::RunResult fixture_result() {
  using isa::Engine;
  core::RunResult r;
  r.total = sim::Time::ps(3'000'000);
  auto rec = [](int64_t s_ns, int64_t e_ns, uint32_t idx, Engine e, uint16_t q) {
    core::InstructionRecord x;
    x.start_ps = s_ns * 1000;
    x.end_ps = e_ns * 1000;
    x.index = idx;
    x.core = 0;
    x.engine = e;
    x.queue = q;
    return x;
  };
  r.records = {rec(0, 800, 0, Engine::Dma, 2),     rec(0, 1000, 0, Engine::Dma, 0),
               rec(400, 1200, 1, Engine::Dma, 2),  rec(1000, 1500, 0, Engine::Tensor, 0),
               rec(1500, 2000, 1, Engine::Tensor, 0), rec(2000, 3000, 0, Engine::Dma, 1)};
  auto unit = [](Engine e, uint16_t q, int64_t busy_ns, uint64_t n, double flops, int64_t bytes) {
    core::UnitStats u;
    u.unit = {0, e, q};
    u.busy_ps = busy_ns * 1000;
    u.instructions = n;
    u.flops = flops;
    u.bytes = bytes;
    return u;
  };
  r.units = {unit(Engine::Tensor, 0, 1000, 2, 2 * kMatmulFlops, 0),
             unit(Engine::Dma, 0, 1000, 1, 0, 131072), unit(Engine::Dma, 1, 1000, 1, 0, 262144),
             unit(Engine::Dma, 2, 1200, 2, 0, 131072)};
  r.instructions = 6;
  r.events = 12;
  r.hbm_bytes = kHbmBytes;
  r.tensor_flops = 2 * kMatmulFlops;
  return r;
}

}  // namespace trnsim::report::testing
