#include "trnsim/common/progress.h"
#include "trnsim/workloads/llm_node_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "trnsim/compiler/compile.h"
#include "trnsim/core/run.h"
#include "trnsim/hw/spec_json.h"
#include "trnsim/kernels/attention.h"
#include "trnsim/runtime/loaded_model.h"
#include "trnsim/workloads/llm_cost_cache.h"
#include "trnsim/workloads/llm_fused_pointwise.h"

namespace trnsim::workloads {
namespace {

using compiler::ElemType;
using compiler::Graph;
using compiler::Node;
using compiler::OpKind;

// Grid: every power of two to 128 (one partition tile), then 192, 256 (a partial second row
// tile costs its rows), then 128 x 3, 4, 6, 8, 12, 16, ... (steps of 1.5x and 1.33x), so that
// an interval never spans more than a third of its value.
int64_t next_grid(int64_t g) {
  if (g < 128) return g * 2;
  if (g < 256) return g == 128 ? 192 : 256;
  const int64_t s = g / 128;
  const bool pow2 = (s & (s - 1)) == 0;
  return 128 * (s == 1 ? 2 : pow2 ? s / 2 * 3 : s / 3 * 4);
}


// Element-wise work above one tile runs in whole 128-row tiles: a token count is costed at
// its tile-padded value, as the time is a step function of the tiles.
int64_t tile_padded(int64_t m) { return m > 128 ? (m + 127) / 128 * 128 : m; }

// Matmul sizes beyond this are extrapolated along the last grid interval (time is linear
// in the number of 128-row tiles there); attention contexts are measured at any length.
constexpr int64_t kMaxMeasuredTokens = 4096;
constexpr int64_t kFineAttention = 8192;
// Attention is measured up to this many keys (the kernel streams key chunks past one head's
// SBUF, so this is already its chunked regime); longer sequences follow the measured curve
// (causal: a t + b t^2; cached keys: linear) through the two grid points below it.
constexpr int64_t kMaxMeasuredKeys = 65536;

void add_input(Graph& g, const std::string& name, compiler::Shape shape) {
  compiler::TensorInfo t;
  t.name = name;
  t.type = ElemType::BFloat16;  // weights and activations held in bf16: HBM traffic as on Neuron
  t.shape = std::move(shape);
  t.shape_known = true;
  g.tensors[name] = t;
  g.inputs.push_back(name);
}

std::string add_node(Graph& g, OpKind op, std::vector<std::string> in, const std::string& out,
                     std::map<std::string, compiler::AttrValue> attrs = {}) {
  Node n;
  n.op = op;
  n.name = out;
  n.inputs = std::move(in);
  n.outputs = {out};
  n.attrs = std::move(attrs);
  compiler::TensorInfo t;
  t.name = out;
  t.type = ElemType::BFloat16;
  g.tensors[out] = t;
  g.nodes.push_back(std::move(n));
  return out;
}

template <class T>
T interp(int64_t x, int64_t lo, int64_t hi, const T& flo, const T& fhi) {
  if (hi == lo) return flo;
  return flo + (fhi - flo) * static_cast<double>(x - lo) / static_cast<double>(hi - lo);
}

// f at token count m, linear between the grid points around it; beyond kMaxMeasuredTokens
// extrapolated along the last grid interval.
template <class F>
NodeCost over_tokens(int64_t m, F&& at) {
  const int64_t cap = std::min(m, kMaxMeasuredTokens);
  const int64_t lo = m > kMaxMeasuredTokens ? grid_below(cap - 1) : grid_below(m);
  const int64_t hi = m > kMaxMeasuredTokens ? cap : grid_above(m);
  return interp(m, lo, hi, at(lo), hi == lo ? NodeCost{} : at(hi));
}

// Cache line values: seconds, then the dynamic energy of every unit but static.
constexpr size_t kCachedValues = 1 + kEnergyUnits - 1;

std::string chip_hash(const hw::ChipSpec& chip) {
  return fmt::format("{:016x}", std::hash<std::string>{}(hw::to_json(chip).dump()));
}

}  // namespace

int64_t grid_below(int64_t x) {
  int64_t g = 1;
  while (next_grid(g) <= x) g = next_grid(g);
  return g;
}

int64_t grid_above(int64_t x) {
  int64_t g = 1;
  while (g < x) g = next_grid(g);
  return g;
}

NodeCosts::NodeCosts(const hw::ChipSpec& chip, NodeCostOptions options) : chip_(chip), opt_(options) {
  // The scope also holds a fingerprint of the compiler and simulator: three small probes run
  // uncached (a few ms), so that costs measured by another build are never read back.
  cache_ = std::make_unique<CostCache>("", false);
  const std::string probe = fmt::format("{:.17g},{:.17g},{:.17g}", measure_matmul_s(200, 256, 640),
                                        measure_attention_s(2, 192, 192, 64, true), measure_pointwise_s(64, 256, 128, 128));
  simulations_ = 0;
  sim_wall_s_ = 0;
  // A DVFS point is named in the scope too (beside the chip hash), so no clock reads another's costs.
  const std::string scope = fmt::format("{}-{}-{:08x}-lnc{}-{}{}", chip.name, chip_hash(chip),
                                        std::hash<std::string>{}(probe) & 0xffffffffu, opt_.cores,
                                        compiler::policy_name(opt_.policy),
                                        chip.energy.clock_scale == 1 ? "" : fmt::format("-cs{:.17g}", chip.energy.clock_scale));
  cache_ = std::make_unique<CostCache>(scope, opt_.use_disk_cache);
}

NodeCosts::~NodeCosts() = default;

template <class F>
NodeCost NodeCosts::cached(const std::string& key, F&& measure) {
  // older lines (time only) are measured again
  // By value: a recording CostPlan keeps the measurement for later (cost_plan.h).
  const std::vector<double> v = cache_->get_or_measure(key, kCachedValues, [this, measure = std::forward<F>(measure)] {
    const auto t0 = std::chrono::steady_clock::now();
    const NodeCost c = measure();
    sim_wall_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++simulations_;
    progress::report("time kernel shapes (cold cost cache)", simulations_, -1);
    std::vector<double> values{c.s};
    for (size_t i = 1; i < kCachedValues; ++i) values.push_back(c.e.j[i - 1]);
    return values;
  });
  NodeCost c{v[0], {}};
  for (size_t i = 1; i < kCachedValues; ++i) c.e.j[i - 1] = v[i];
  return c;
}

NodeCost NodeCosts::time_graph(compiler::Graph g) const {
  compiler::CompileOptions co;
  co.policy = opt_.policy;
  co.cores = opt_.cores;
  for (const auto& n : g.inputs) co.input_shapes[n] = g.tensors.at(n).shape;
  auto cm = compiler::compile(std::move(g), chip_, co);
  const runtime::Report r = runtime::LoadedModel(cm, chip_).run({}, core::Mode::Timing).report;
  return {r.time_s, UnitEnergy::dynamic_of(r.energy_by_unit_j)};
}

NodeCost NodeCosts::measure_matmul(int64_t m, int64_t k, int64_t n) {
  return cached(fmt::format("matmul:m={},k={},n={}", m, k, n), [=, this] {
    Graph g;
    g.name = "llm_matmul";
    g.opset = 17;
    add_input(g, "x", {m, k});
    add_input(g, "w", {k, n});  // a graph input, not a constant: no weight bytes exist
    g.outputs = {add_node(g, OpKind::MatMul, {"x", "w"}, "y")};
    return time_graph(std::move(g));
  });
}

NodeCost NodeCosts::measure_pointwise(int64_t m, int64_t h, int64_t i, int64_t qk) {
  return cached(fmt::format("pointwise:m={},h={},i={},qk={}", m, h, i, qk),
                [=, this] { return time_program(fused_pointwise_program(chip_, opt_.cores, m, h, i, qk, false)); });
}

NodeCost NodeCosts::time_program(const isa::Program& p) const {
  core::RunOptions ro;
  ro.mode = core::Mode::Timing;
  ro.record_instructions = false;
  ro.validate = false;
  const core::RunResult r = core::run(p, chip_, {}, ro);
  return {r.total.ms() * 1e-3, UnitEnergy::dynamic_of(r.energy_by_unit())};
}

NodeCost NodeCosts::measure_attention(int64_t heads, int64_t rows, int64_t keys, int64_t head_dim, bool causal) {
  return cached(fmt::format("attention:h={},q={},k={},d={},causal={}", heads, rows, keys, head_dim, causal ? 1 : 0), [=, this] {
    kernels::BuilderOptions bo;
    bo.cores = opt_.cores;
    kernels::KernelBuilder kb(chip_, bo);
    const auto dt = numerics::DType::BF16;
    kernels::AttentionSpec s;
    s.q = kernels::AttentionOperand::dense(kb.hbm_input("q", {heads, rows, head_dim}, dt));
    // K in the layout NKI's attention kernels take, [head_dim, keys] per head: the KV cache
    // keeps K transposed for token generation, and the prefill's K projection writes K^T (its
    // matmul with the operands swapped), so no kernel transposes K on TensorE.
    s.k_transposed = true;
    s.k = kernels::AttentionOperand::dense(kb.hbm_input("k", {heads, head_dim, keys}, dt));
    s.v = kernels::AttentionOperand::dense(kb.hbm_input("v", {heads, keys, head_dim}, dt));
    s.out = kernels::AttentionOperand::dense(kb.hbm_output("out", {heads, rows, head_dim}, dt));
    s.heads = heads;
    s.seq_q = rows;
    s.seq_k = keys;
    s.head_dim = head_dim;
    s.causal = causal;
    s.dtype = dt;
    // Heads are independent: each physical core of the logical core takes a share.
    const int64_t parts = std::min<int64_t>(opt_.cores, heads);
    for (int64_t c = 0; c < parts; ++c) {
      kb.set_core(static_cast<int>(c));
      s.head_begin = c * heads / parts;
      s.head_end = (c + 1) * heads / parts;
      kernels::attention(kb, s);
    }
    return time_program(kb.build());
  });
}

NodeCost NodeCosts::matmul(int64_t m, int64_t k, int64_t n) {
  if (!opt_.interpolate) return measure_matmul(m, k, n);
  // The lowering keeps weights resident and reads each block once (a partial last row tile
  // costs its rows, not a whole tile), so the time is interpolated on the token count itself.
  return over_tokens(m, [&](int64_t t) { return measure_matmul(t, k, n); });
}

NodeCost NodeCosts::pointwise(int64_t m, int64_t h, int64_t i, int64_t qk) {
  if (!opt_.interpolate) return measure_pointwise(m, h, i, qk);
  // The fused program works in 128-row tiles above one tile: a step function, as the matmul.
  return over_tokens(tile_padded(m), [&](int64_t t) { return measure_pointwise(t, h, i, qk); });
}

NodeCost NodeCosts::prefill_attention(int64_t heads, int64_t seq, int64_t head_dim) {
  if (!opt_.interpolate) return measure_attention(heads, seq, seq, head_dim, true);
  // The flash kernel's time steps with every 64 query rows (its query and key tiles): up to
  // kFineAttention it is measured at multiples of 64 and interpolated linearly between them.
  int64_t lo = seq <= 128 ? grid_below(seq) : seq / 64 * 64, hi = seq <= 128 ? grid_above(seq) : (seq + 63) / 64 * 64;
  if (seq > kFineAttention) lo = grid_below(seq), hi = grid_above(seq);
  if (hi > kMaxMeasuredKeys) hi = grid_below(kMaxMeasuredKeys), lo = grid_below(hi - 1);
  const NodeCost flo = measure_attention(heads, lo, lo, head_dim, true);
  if (hi == lo) return flo;
  const NodeCost fhi = measure_attention(heads, hi, hi, head_dim, true);
  if (seq <= kFineAttention) return interp(seq, lo, hi, flo, fhi);
  // Long prompts: a t + b t^2 (the score blocks under the diagonal) through both grid points;
  // each unit's energy along the same curve (its work grows as the time does).
  const double l = static_cast<double>(lo), h = static_cast<double>(hi), t = static_cast<double>(seq);
  const auto fit = [&](double vlo, double vhi, double& out) {
    const double b = (vhi / h - vlo / l) / (h - l), a = vlo / l - b * l;
    if (!(a >= 0 && b >= 0)) return false;
    out = a * t + b * t * t;
    return true;
  };
  NodeCost c = interp(seq, lo, hi, flo, fhi);
  if (!fit(flo.s, fhi.s, c.s)) return c;
  for (int i = 0; i < kEnergyUnits; ++i)
    if (!fit(flo.e.j[i], fhi.e.j[i], c.e.j[i])) c.e.j[i] = interp(seq, lo, hi, flo.e.j[i], fhi.e.j[i]);
  return c;
}

NodeCost NodeCosts::cross_attention(int64_t heads, int64_t rows, int64_t keys, int64_t head_dim) {
  keys = std::max<int64_t>(1, keys);
  if (!opt_.interpolate) return measure_attention(heads, rows, keys, head_dim, false);
  int64_t lo = grid_below(keys), hi = grid_above(keys);
  if (hi > kMaxMeasuredKeys) hi = grid_below(kMaxMeasuredKeys), lo = grid_below(hi - 1);  // linear beyond
  // Query rows: exact for the decode shapes (rows = the group of query heads, <= 16); a
  // prefill chunk's rows interpolate on the same grid.
  auto at_rows = [&](int64_t r) {
    return interp(keys, lo, hi, measure_attention(heads, r, lo, head_dim, false),
                  hi == lo ? NodeCost{} : measure_attention(heads, r, hi, head_dim, false));
  };
  if (rows <= 16) return at_rows(rows);
  const int64_t rlo = grid_below(rows), rhi = grid_above(rows);
  return interp(rows, rlo, rhi, at_rows(rlo), rhi == rlo ? NodeCost{} : at_rows(rhi));
}

}  // namespace trnsim::workloads

namespace trnsim::workloads {

NodeCost NodeCosts::measure_norms(int64_t m, int64_t h) {
  return cached(fmt::format("norms:m={},h={}", m, h),
                [=, this] { return time_program(fused_pointwise_program(chip_, opt_.cores, m, h, 1, 1, true)); });
}

NodeCost NodeCosts::norms(int64_t m, int64_t h) {
  if (!opt_.interpolate) return measure_norms(m, h);
  return over_tokens(tile_padded(m), [&](int64_t t) { return measure_norms(t, h); });
}

NodeCost NodeCosts::decode_attention(int64_t heads, int64_t rows, int64_t keys, int64_t head_dim) {
  // Up to 8 heads measured exactly: the kernel interleaves up to four heads' chains, so small
  // head counts are not linear in the heads.
  if (!opt_.interpolate || heads <= 8) return cross_attention(heads, rows, keys, head_dim);
  const int64_t lo = grid_below(heads), hi = grid_above(heads);
  return interp(heads, lo, hi, cross_attention(lo, rows, keys, head_dim),
                hi == lo ? NodeCost{} : cross_attention(hi, rows, keys, head_dim));
}

}  // namespace trnsim::workloads
