// Tensor-parallel scale (issue 5, items 4-5): one pre-norm transformer layer (LayerNorm,
// 64- or 144-head attention with a causal mask, SiLU MLP of 4x hidden, residuals; bf16 policy,
// 512 tokens) split Megatron-style over 4 and 16 chips of trn2.48xlarge, 64 chips of a Trn2
// UltraServer and 144 chips of a Trn3 UltraServer (gen2), in timing mode. Hidden size 4096
// (64 heads of 64) for 4..64 chips; 4608 (144 heads of 32, FF 18432) for 144 chips, so that
// heads and columns divide by the chip count. Wall seconds are the benchmark's real time
// (compile + split + lowering + simulation); the counters give the simulated latency and the
// communication share. Target: 144 chips in seconds. The whole layer is never lowered (only
// the front passes run on it; rank 0's shard is lowered).
#include <benchmark/benchmark.h>

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "trnsim/compiler/ir.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/tensor_parallel_model.h"

using namespace trnsim;
using compiler::OpKind;

namespace {

class LayerBuilder {
 public:
  compiler::Graph g;
  LayerBuilder() { g.name = "tp_layer", g.opset = 17; }
  void input(const std::string& n, compiler::Shape s) {
    add_tensor(n, std::move(s), std::nullopt);
    g.inputs.push_back(n);
  }
  // Weights: values do not matter in timing mode, but the compiler holds them like any model's.
  std::string weight(const std::string& n, compiler::Shape s, double v = 0.01) {
    add_tensor(n, s, std::vector<double>(static_cast<size_t>(compiler::numel(s)), v));
    return n;
  }
  std::string ints(const std::string& n, std::vector<int64_t> v) {
    auto& t = add_tensor(n, {static_cast<int64_t>(v.size())}, std::vector<double>(v.begin(), v.end()));
    t.type = compiler::ElemType::Int64;
    return n;
  }
  std::string node(OpKind op, const std::string& name, std::vector<std::string> in, std::map<std::string, compiler::AttrValue> attrs = {}) {
    compiler::Node n;
    n.op = op, n.name = name, n.inputs = std::move(in), n.outputs = {name}, n.attrs = std::move(attrs);
    compiler::TensorInfo t;
    t.name = name;
    g.tensors[name] = t;
    g.nodes.push_back(std::move(n));
    return name;
  }

 private:
  compiler::TensorInfo& add_tensor(const std::string& n, compiler::Shape s, std::optional<std::vector<double>> data) {
    compiler::TensorInfo t;
    t.name = n, t.shape = std::move(s), t.shape_known = true, t.data = std::move(data);
    return g.tensors[n] = std::move(t);
  }
};

compiler::Graph transformer_layer(int64_t S, int64_t D, int64_t H, int64_t F) {
  LayerBuilder b;
  const int64_t hd = D / H;
  b.input("x", {1, S, D});
  std::vector<double> mask(static_cast<size_t>(S * S));
  for (int64_t i = 0; i < S; ++i)
    for (int64_t j = 0; j < S; ++j) mask[static_cast<size_t>(i * S + j)] = j <= i ? 0.0 : -1e9;
  b.weight("mask", {1, 1, S, S});
  b.g.tensor("mask").data = mask;
  b.weight("scale", {}, 1.0 / std::sqrt(static_cast<double>(hd)));
  b.ints("heads_shape", {1, S, H, hd});
  b.ints("model_shape", {1, S, D});
  auto ln = [&](const std::string& in, const std::string& n) {
    return b.node(OpKind::LayerNormalization, n, {in, b.weight(n + "_g", {D}, 1.0), b.weight(n + "_b", {D}, 0.0)});
  };
  auto mm = [&](const std::string& in, const std::string& n, int64_t k, int64_t c) { return b.node(OpKind::MatMul, n, {in, b.weight(n + "_w", {k, c})}); };
  auto heads = [&](const std::string& t, std::vector<int64_t> perm) {
    return b.node(OpKind::Transpose, t + "_h", {b.node(OpKind::Reshape, t + "_4d", {t, "heads_shape"})}, {{"perm", perm}});
  };
  const std::string h = ln("x", "ln1");
  const std::string q = heads(mm(h, "q", D, D), {0, 2, 1, 3}), kt = heads(mm(h, "k", D, D), {0, 2, 3, 1}),
                    v = heads(mm(h, "v", D, D), {0, 2, 1, 3});
  std::string s = b.node(OpKind::MatMul, "qk", {q, kt});
  s = b.node(OpKind::Add, "masked", {b.node(OpKind::Mul, "scaled", {s, "scale"}), "mask"});
  s = b.node(OpKind::Softmax, "probs", {s}, {{"axis", int64_t{-1}}});
  s = b.node(OpKind::Transpose, "ctx_t", {b.node(OpKind::MatMul, "pv", {s, v})}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  s = b.node(OpKind::Reshape, "ctx", {s, "model_shape"});
  const std::string x1 = b.node(OpKind::Add, "residual1", {"x", mm(s, "o", D, D)});
  const std::string up = mm(ln(x1, "ln2"), "up", D, F);
  const std::string act = b.node(OpKind::Mul, "silu", {up, b.node(OpKind::Sigmoid, "sigmoid", {up})});
  b.node(OpKind::Add, "out", {x1, mm(act, "down", F, D)});
  b.g.outputs = {"out"};
  return std::move(b.g);
}

void BM_TensorParallelLayer(benchmark::State& state, const char* system, int tp, int64_t D, int64_t H) {
  const hw::SystemSpec sys = hw::load_system(system);
  runtime::TpOptions o;
  o.tp = tp;
  o.compile.policy = compiler::DTypePolicy::BF16;
  o.all_ranks = false;  // timing: rank 0 stands for every rank
  runtime::TpReport r;
  double build_s = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    runtime::TensorParallelModel m(transformer_layer(512, D, H, 4 * D), sys, o);
    build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r = m.run({}, core::Mode::Timing).report;
    if (std::getenv("TP_SCALE_TABLE")) fmt::print("{}", runtime::tp_report_table(r, 12));
  }
  state.counters["chips"] = tp;
  state.counters["hidden"] = static_cast<double>(D);
  state.counters["build_wall_s"] = build_s;
  state.counters["sim_wall_s"] = r.sim_wall_s;
  state.counters["latency_us"] = r.time_s * 1e6;
  state.counters["compute_us"] = r.compute_time_s * 1e6;
  state.counters["allreduce_us"] = r.communication_time_s * 1e6;
  state.counters["comm_share"] = r.communication_share;
  state.SetLabel(fmt::format("{} {}x {}", system, r.all_reduces.size(), r.all_reduces.empty() ? "" : r.all_reduces[0].algorithm));
}

BENCHMARK_CAPTURE(BM_TensorParallelLayer, trn2_48xl_4, "trn2.48xlarge", 4, 4096, 64)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_TensorParallelLayer, trn2_48xl_16, "trn2.48xlarge", 16, 4096, 64)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_TensorParallelLayer, trn2_ultraserver_64, "trn2-ultraserver", 64, 4096, 64)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_TensorParallelLayer, trn3_ultraserver_144, "trn3-ultraserver-gen2", 144, 4608, 144)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
