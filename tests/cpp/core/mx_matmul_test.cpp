// The MX instructions (Trainium3): QuantizeMX then the MX matmul, against (a) an independent
// reference built from numerics::mx_quantize/mx_dequantize (held bit for bit to ml_dtypes in
// tests/python/test_numerics_mx.py) and an fp64 matmul, (b) the plain-loop ISA reference; the
// MX rate from trn3.yaml; the one-line refusal on a chip without MX.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "trnsim/common/error.h"
#include "trnsim/core/run.h"
#include "trnsim/core/tensor_engine.h"
#include "trnsim/core/vector_engine.h"
#include "trnsim/sim/time.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/isa/validate.h"
#include "trnsim/numerics/convert.h"
#include "ref_memory.h"

using namespace trnsim;
using namespace trnsim::isa;
using numerics::DType;

namespace {

const hw::ChipSpec& chip(const char* name) {
  static std::map<std::string, hw::ChipSpec> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, hw::load_chip(name)).first;
  return it->second;
}

AccessPattern sb(int P, int64_t F, DType t, int64_t off) { return tile_ap(Space::SBUF, 0, P, off, F, t); }
AccessPattern hbm(uint32_t tensor, int P, int64_t F, DType t) {
  AccessPattern a = tile_ap(Space::SBUF, 0, P, 0, F, t);
  a.space = Space::HBM;
  a.tensor = tensor;
  a.partition_stride = F;
  return a;
}

// A [K, M] and X [K, N] (fp32, K on the partitions) quantised to MX on VectorE, multiplied on
// TensorE into PSUM, stored as "out" [M, N].
struct MxProgram {
  int K = 100, M = 64, N = 80;  // K = 3 full blocks of 32 and a short one of 4
  DType a_elem = DType::F8E4M3, x_elem = DType::F4E2M1;
  Program build() const {
    Program p;
    p.name = "mx";
    p.cores.resize(1);
    p.cores[0].dma_queues.resize(2);
    p.semaphores = 3;
    p.tensors = {{"a", {K, M}, DType::F32, HbmTensor::Kind::Input},
                 {"x", {K, N}, DType::F32, HbmTensor::Kind::Input},
                 {"out", {M, N}, DType::F32, HbmTensor::Kind::Output}};
    const AccessPattern a = sb(K, M, DType::F32, 0), x = sb(K, N, DType::F32, 4096);
    const AccessPattern ac = sb(K, M, a_elem, 8192), as = sb((K + 31) / 32, M, DType::E8M0, 9216);
    const AccessPattern xc = sb(K, N, x_elem, 10240), xs = sb((K + 31) / 32, N, DType::E8M0, 11264);
    const AccessPattern out = tile_ap(Space::PSUM, 0, M, 0, N, DType::F32);
    auto& q0 = p.cores[0].dma_queues[0];
    q0.push_back({Dma{a, hbm(0, K, M, DType::F32)}, {}});
    q0.push_back({Dma{x, hbm(1, K, N, DType::F32)}, {}});
    q0[0].sync.signal = q0[1].sync.signal = 0;
    auto& ve = p.cores[0].stream(Engine::Vector);
    ve.push_back({QuantizeMx{ac, as, a}, {}});
    ve.push_back({QuantizeMx{xc, xs, x}, {}});
    ve[0].sync.add_wait(0, 2);
    ve[1].sync.signal = 1;
    Instruction mm{MatmulMx{out, ac, xc, as, xs, true, true}, {}};
    mm.sync.add_wait(1, 1);
    mm.sync.signal = 2;
    p.cores[0].stream(Engine::Tensor).push_back(mm);
    Instruction st{Dma{hbm(2, M, N, DType::F32), out}, {}};
    st.sync.add_wait(2, 1);
    p.cores[0].dma_queues[1].push_back(st);
    return p;
  }
};

// v [K, F] quantised per column (blocks of 32 down K) and decoded, in double.
std::vector<double> mx_columns(const std::vector<float>& v, int K, int F, DType elem) {
  const DType mx = *mx_block_dtype(elem);
  std::vector<double> r(v.size());
  std::vector<float> col(K), deq(K);
  std::vector<uint8_t> codes(K), scales((K + 31) / 32);
  for (int f = 0; f < F; ++f) {
    for (int k = 0; k < K; ++k) col[k] = v[k * F + f];
    numerics::mx_quantize(col, mx, codes, scales);
    numerics::mx_dequantize(codes, scales, mx, deq);
    for (int k = 0; k < K; ++k) r[k * F + f] = deq[k];
  }
  return r;
}

TEST(MxMatmul, QuantizeThenMatmulMatchesAnFp64MatmulOfTheMxValues) {
  for (auto [ae, xe] : {std::pair{DType::F8E4M3, DType::F4E2M1}, std::pair{DType::F8E5M2, DType::F8E4M3}}) {
    MxProgram mp;
    mp.a_elem = ae;
    mp.x_elem = xe;
    const Program p = mp.build();
    std::mt19937 rng(3);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> a(mp.K * mp.M), x(mp.K * mp.N);
    for (size_t i = 0; i < a.size(); ++i) a[i] = nd(rng) * std::ldexp(1.0f, static_cast<int>(i % 7) - 3);
    for (auto& v : x) v = nd(rng);
    const std::map<std::string, std::vector<float>> in{{"a", a}, {"x", x}};
    const auto got = core::run(p, chip("trn3"), in).outputs.at("out");
    const auto ref = run_reference(p, in, {Engine::Vector, Engine::Tensor});
    const auto aq = mx_columns(a, mp.K, mp.M, ae), xq = mx_columns(x, mp.K, mp.N, xe);
    for (int m = 0; m < mp.M; ++m)
      for (int n = 0; n < mp.N; ++n) {
        double want = 0, mag = 0;
        for (int k = 0; k < mp.K; ++k) {
          want += aq[k * mp.M + m] * xq[k * mp.N + n];
          mag += std::fabs(aq[k * mp.M + m] * xq[k * mp.N + n]);
        }
        // fp32 accumulation over K products: at most K ulps of the magnitude sum.
        const double tol = mp.K * 0x1p-24 * mag + 1e-30;
        ASSERT_NEAR(got[m * mp.N + n], want, tol) << m << "," << n;
        ASSERT_NEAR(ref[m * mp.N + n], want, tol) << m << "," << n;
      }
  }
}

TEST(MxMatmul, TimedAtTheMxRateOfTrn3) {
  // trn3.yaml: dtype_rate mxfp8/mxfp4 4 (315 TF MX vs 79 TF bf16 per core, [nki]).
  const auto& te = chip("trn3").core.tensor;
  const Op mx = MatmulMx{tile_ap(Space::PSUM, 0, 128, 0, 512, DType::F32), sb(128, 128, DType::F8E4M3, 0),
                         sb(128, 512, DType::F4E2M1, 4096), sb(4, 128, DType::E8M0, 8192), sb(4, 512, DType::E8M0, 12288)};
  const Op bf = Matmul{tile_ap(Space::PSUM, 0, 128, 0, 512, DType::F32), sb(128, 128, DType::BF16, 0),
                       sb(128, 512, DType::BF16, 4096)};
  EXPECT_DOUBLE_EQ(core::TensorEngine::multiply_cycles(mx, te), 512.0 / 4);
  EXPECT_DOUBLE_EQ(core::TensorEngine::multiply_cycles(bf, te) / core::TensorEngine::multiply_cycles(mx, te),
                   te.dtype_rate.at(DType::MXFP4) / te.dtype_rate.at(DType::BF16));
  // Whole program in timing mode: the matmul's record is 512/4 cycles at 2.4 GHz plus the
  // stationary load (128 x 0.25 / 4) with TensorE idle before it.
  MxProgram mp;
  mp.K = 128, mp.M = 128, mp.N = 512;
  core::RunOptions o;
  o.mode = core::Mode::Timing;
  const Program p = mp.build();
  const auto r = core::run(p, chip("trn3"), {}, o);
  for (const auto& rec : r.records)
    if (rec.engine == Engine::Tensor) EXPECT_EQ(rec.end_ps - rec.start_ps, sim::Time::cycles(128 + 8, GHz(2.4)).ps());
  // QuantizeMX (an estimate: two passes at the element rate): fp32 [128, 512] in, 256 elements
  // per cycle for 32-bit operands on trn3's 128 lanes -> 2 x 512 / 2 cycles.
  const Op q = QuantizeMx{sb(128, 512, DType::F8E4M3, 0), sb(4, 512, DType::E8M0, 1024), sb(128, 512, DType::F32, 2048)};
  EXPECT_DOUBLE_EQ(core::vector_cycles(q, chip("trn3").core.vector), 512.0);
}

TEST(MxMatmul, RefusedInOneLineOnAChipWithoutMx) {
  const Program p = MxProgram{}.build();
  try {
    validate(p, chip("trn2"));
    FAIL() << "trn2 accepted an MX program";
  } catch (const UnsupportedError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("trn2 has no MX matmul"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST(MxMatmul, ScaleTileOfTheWrongShapeIsAShapeError) {
  Program p = MxProgram{}.build();
  std::get<MatmulMx>(p.cores[0].stream(Engine::Tensor)[0].op).moving_scale.partitions = 3;
  EXPECT_THROW(validate(p, chip("trn3")), ShapeError);
}

}  // namespace
