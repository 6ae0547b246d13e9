// Helpers of the one-node lowering tests: a Linear (+ bias, residual, LayerNorm) graph, its
// plain-loop reference, and a compile-and-run on one NeuronCore.
#pragma once
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "../compiler/onnx_model.h"
#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/loaded_model.h"

namespace trnsim::runtime::testing {

using trnsim::testing::OnnxModel;
using trnsim::testing::values;

// y = LayerNorm(a @ w + bias [+ res]) with scale g and shift beta; weights seeded from `seed`.
struct LinearLn {
  int m, k, n;
  bool residual;
  uint32_t seed;
  std::vector<float> w() const { return values(size_t(k) * n, seed); }
  std::vector<float> row(int i) const { return values(size_t(n), seed + 1 + i); }  // bias, g, beta
  OnnxModel model() const {
    OnnxModel om;
    om.input("a", {m, k});
    if (residual) om.input("res", {m, n});
    om.floats("w", {k, n}, w()).floats("bias", {n}, row(0)).floats("g", {n}, row(1)).floats("beta", {n}, row(2));
    om.node("MatMul", {"a", "w"}, {"mm"});
    om.node("Add", {"mm", "bias"}, {"h"});
    if (residual) om.node("Add", {"h", "res"}, {"r"});
    om.node("LayerNormalization", {residual ? "r" : "h", "g", "beta"}, {"y"});
    om.output("y");
    return om;
  }
  // Row r of the reference; `round` is applied to the matmul operands (identity or bf16).
  template <typename Round>
  std::vector<double> want(int r, const std::vector<float>& a, const std::vector<float>& res, Round round) const {
    const auto wv = w(), bias = row(0), g = row(1), beta = row(2);
    std::vector<double> h(static_cast<size_t>(n)), y(static_cast<size_t>(n));
    double mean = 0, var = 0;
    for (int c = 0; c < n; ++c) {
      double s = 0;
      for (int i = 0; i < k; ++i) s += round(a[size_t(r) * k + i]) * round(wv[size_t(i) * n + c]);
      h[c] = s + bias[c] + (residual ? res[size_t(r) * n + c] : 0.0);
      mean += h[c] / n;
    }
    for (int c = 0; c < n; ++c) var += (h[c] - mean) * (h[c] - mean) / n;
    for (int c = 0; c < n; ++c) y[c] = (h[c] - mean) / std::sqrt(var + 1e-5) * g[c] + beta[c];
    return y;
  }
};

inline double exact(float x) { return double(x); }
inline double bf16(float x) {  // round to nearest even
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  std::memcpy(&x, &u, 4);
  return double(x);
}

// Compiles for one NeuronCore of `chip`.
inline compiler::CompiledModel compile_one_core(const OnnxModel& om, const hw::ChipSpec& chip,
                                                compiler::DTypePolicy policy = compiler::DTypePolicy::FP32, bool timing_only = false) {
  compiler::CompileOptions o;
  o.cores = 1;
  o.policy = policy;
  o.timing_only = timing_only;
  return compiler::compile(compiler::import_onnx_bytes(om.bytes()), chip, o);
}

// Compiles for one NeuronCore of `chip` and runs in `mode`.
inline RunOutput run_one_core(const OnnxModel& om, const hw::ChipSpec& chip, const std::map<std::string, std::vector<float>>& in,
                              compiler::DTypePolicy policy = compiler::DTypePolicy::FP32, core::Mode mode = core::Mode::Functional) {
  auto cm = compile_one_core(om, chip, policy, mode == core::Mode::Timing);
  return LoadedModel(cm, chip).run(in, mode);
}

}  // namespace trnsim::runtime::testing
