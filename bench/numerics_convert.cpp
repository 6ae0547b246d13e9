// Conversion throughput of the numerics layer (elements per second). bench/numerics_convert.py
// runs this beside ml_dtypes' numpy conversions of the same arrays and prints the ratios.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "trnsim/numerics/convert.h"

namespace {
using namespace trnsim::numerics;

// Normal values spread over +-2^20 (ordinary, overflowing and subnormal fp8 results alike),
// the same recipe as the Python driver's ml_dtypes input.
const std::vector<float>& input(size_t n) {
  static std::vector<float> x;
  if (x.size() != n) {
    std::mt19937 rng(1234);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_int_distribution<int> exp(-20, 20);
    x.resize(n);
    for (auto& v : x) v = std::ldexp(normal(rng), exp(rng));
  }
  return x;
}

template <class Bits>
void BM_Encode(benchmark::State& state, DType t, Rounding r) {
  const auto& x = input(static_cast<size_t>(state.range(0)));
  std::vector<Bits> out(x.size());
  ConvertOptions opt{r, Overflow::Default, 42, 0};
  for (auto _ : state) {
    encode(x, t, std::span<Bits>(out), opt);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(x.size()));
}

template <class Bits>
void BM_Decode(benchmark::State& state, DType t) {
  const auto& x = input(static_cast<size_t>(state.range(0)));
  std::vector<Bits> codes(x.size());
  encode(x, t, std::span<Bits>(codes));
  std::vector<float> out(x.size());
  for (auto _ : state) {
    decode(std::span<const Bits>(codes), t, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(x.size()));
}

void BM_Quantize(benchmark::State& state, DType t) {
  const auto& x = input(static_cast<size_t>(state.range(0)));
  std::vector<float> v(x.size());
  for (auto _ : state) {
    state.PauseTiming();
    v = x;
    state.ResumeTiming();
    quantize(v, t);
    benchmark::DoNotOptimize(v.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(x.size()));
}

// BENCHMARK_CAPTURE names a variable after the function, so no template arguments there.
void BM_Encode16(benchmark::State& s, DType t, Rounding r) { BM_Encode<uint16_t>(s, t, r); }
void BM_Encode8(benchmark::State& s, DType t, Rounding r) { BM_Encode<uint8_t>(s, t, r); }
void BM_Decode16(benchmark::State& s, DType t) { BM_Decode<uint16_t>(s, t); }
void BM_Decode8(benchmark::State& s, DType t) { BM_Decode<uint8_t>(s, t); }

constexpr int64_t kN = 1 << 20;
using R = Rounding;
BENCHMARK_CAPTURE(BM_Encode16, bf16, DType::BF16, R::NearestEven)->Arg(kN);
BENCHMARK_CAPTURE(BM_Encode16, fp16, DType::F16, R::NearestEven)->Arg(kN);
BENCHMARK_CAPTURE(BM_Encode8, fp8_e4m3, DType::F8E4M3, R::NearestEven)->Arg(kN);
BENCHMARK_CAPTURE(BM_Encode8, fp8_e5m2, DType::F8E5M2, R::NearestEven)->Arg(kN);
BENCHMARK_CAPTURE(BM_Encode8, fp4_e2m1, DType::F4E2M1, R::NearestEven)->Arg(kN);
BENCHMARK_CAPTURE(BM_Encode16, bf16_stochastic, DType::BF16, R::Stochastic)->Arg(kN);
BENCHMARK_CAPTURE(BM_Encode8, fp8_e4m3_stochastic, DType::F8E4M3, R::Stochastic)->Arg(kN);
BENCHMARK_CAPTURE(BM_Decode16, bf16, DType::BF16)->Arg(kN);
BENCHMARK_CAPTURE(BM_Decode8, fp8_e4m3, DType::F8E4M3)->Arg(kN);
BENCHMARK_CAPTURE(BM_Quantize, bf16, DType::BF16)->Arg(kN);
BENCHMARK_CAPTURE(BM_Quantize, mxfp8_e4m3, DType::MXFP8E4M3)->Arg(kN);

}  // namespace

BENCHMARK_MAIN();
